"""A small PDF writer for generated contracts: pages of text with a real text layer that a PDF
reader extracts in Chinese and English alike.

The text is set in a Type0 font with Identity-H encoding (two bytes a character) and a
ToUnicode CMap that maps each code back to its character: no font file is embedded (a viewer
draws boxes), but the text layer is exactly the text. Paragraphs are wrapped to a page width
as a word processor would, so a reader must join the lines again. `pdf_without_text` is a
scan's PDF: pages that draw, with no text at all.
"""

from __future__ import annotations

import unicodedata

PAGE_WIDTH, PAGE_HEIGHT = 595, 842  # A4, in points
FONT_SIZE, LEADING, MARGIN = 10, 14, 50


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def wrap(paragraph: str, width: int) -> list[str]:
    """`paragraph` broken into lines of at most `width` columns (a Chinese character takes
    two): between words in English, between any two characters in Chinese."""
    lines, line, used = [], "", 0
    for token in _tokens(paragraph):
        size = sum(2 if _wide(c) else 1 for c in token)
        if used + size > width and line.strip():
            lines.append(line.rstrip())
            line, used = "", 0
            token = token.lstrip()
            size = sum(2 if _wide(c) else 1 for c in token)
        line, used = line + token, used + size
    if line.strip():
        lines.append(line.rstrip())
    return lines


def _tokens(text: str) -> list[str]:
    """Words with the space before them, and Chinese characters one by one."""
    tokens, word = [], ""
    for char in text:
        if _wide(char):
            if word:
                tokens.append(word)
                word = ""
            tokens.append(char)
        elif char == " " and word.strip():
            tokens.append(word)
            word = " "
        else:
            word += char
    if word:
        tokens.append(word)
    return tokens


class _Writer:
    def __init__(self):
        self.objects: list[bytes] = []

    def add(self, body: bytes) -> int:
        self.objects.append(body)
        return len(self.objects)

    def stream(self, data: bytes, extra: str = "") -> int:
        return self.add(f"<< /Length {len(data)}{extra} >>\nstream\n".encode() + data + b"\nendstream")

    def bytes(self, root: int) -> bytes:
        out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, body in enumerate(self.objects, start=1):
            offsets.append(len(out))
            out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
        xref = len(out)
        out += f"xref\n0 {len(self.objects) + 1}\n0000000000 65535 f \n".encode()
        out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
        out += f"trailer\n<< /Size {len(self.objects) + 1} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
        return bytes(out)


def _to_unicode(codes: dict[str, int]) -> bytes:
    entries = [f"<{code:04X}> <{ord(char):04X}>" for char, code in codes.items()]
    blocks = []
    for start in range(0, len(entries), 100):
        chunk = entries[start : start + 100]
        blocks.append(f"{len(chunk)} beginbfchar\n" + "\n".join(chunk) + "\nendbfchar")
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        + "\n".join(blocks)
        + "\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend"
    ).encode()


def _font(writer: _Writer, codes: dict[str, int]) -> int:
    descriptor = writer.add(
        b"<< /Type /FontDescriptor /FontName /AlmanacSans /Flags 4 /FontBBox [0 -120 1000 880]"
        b" /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>"
    )
    cid = writer.add(
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /AlmanacSans"
        b" /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >>"
        + f" /FontDescriptor {descriptor} 0 R /DW 1000 /CIDToGIDMap /Identity >>".encode()
    )
    cmap = writer.stream(_to_unicode(codes))
    return writer.add(
        b"<< /Type /Font /Subtype /Type0 /BaseFont /AlmanacSans /Encoding /Identity-H"
        + f" /DescendantFonts [{cid} 0 R] /ToUnicode {cmap} 0 R >>".encode()
    )


def _content(lines: list[str], codes: dict[str, int]) -> bytes:
    ops = [f"BT /F1 {FONT_SIZE} Tf {LEADING} TL {MARGIN} {PAGE_HEIGHT - MARGIN} Td"]
    for line in lines:
        hex_codes = "".join(f"{codes[char]:04X}" for char in line)
        ops.append(f"<{hex_codes}> Tj T*" if hex_codes else "T*")
    ops.append("ET")
    return "\n".join(ops).encode()


def pdf_bytes(pages: list[str], *, width: int = 96) -> bytes:
    """A PDF of these pages: each page's paragraphs (split at newlines) wrapped to `width`
    columns. Characters outside the Basic Multilingual Plane are not supported."""
    page_lines = [
        [line for paragraph in page.split("\n") for line in (wrap(paragraph, width) or [""])]
        for page in pages
    ]
    chars = sorted({char for lines in page_lines for line in lines for char in line})
    codes = {char: number for number, char in enumerate(chars, start=1)}
    writer = _Writer()
    font = _font(writer, codes)
    pages_id = len(writer.objects) + 1 + 2 * len(page_lines)  # after each page's content and page
    kids = []
    for lines in page_lines:
        content = writer.stream(_content(lines, codes))
        kids.append(
            writer.add(
                f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}]"
                f" /Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>".encode()
            )
        )
    assert (
        writer.add(
            f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>".encode()
        )
        == pages_id
    )
    root = writer.add(f"<< /Type /Catalog /Pages {pages_id} 0 R >>".encode())
    return writer.bytes(root)


def pdf_without_text(pages: int = 1) -> bytes:
    """A PDF whose pages only draw (grey boxes, as a scan's images): no text layer."""
    writer = _Writer()
    pages_id = 1 + 2 * pages
    kids = []
    for _ in range(pages):
        content = writer.stream(b"0.5 g 50 50 495 742 re f")
        kids.append(
            writer.add(
                f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}]"
                f" /Resources << >> /Contents {content} 0 R >>".encode()
            )
        )
    writer.add(f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {pages} >>".encode())
    root = writer.add(f"<< /Type /Catalog /Pages {pages_id} 0 R >>".encode())
    return writer.bytes(root)
