"""A document's file: what it is by its bytes (never by its name), where it is kept (the data
directory, by tenant and hash), and the text of its pages (PDF through pypdf)."""

from __future__ import annotations

import hashlib
import io
import logging
from pathlib import Path

from django.conf import settings

from almanac.errors import ApplicationError
from documents.models import Document

logger = logging.getLogger(__name__)

# What a refused file looks like, to say what it is (a PNG named contract.pdf is a PNG).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a ZIP archive (a Word or Excel file is one)"),
    (b"\xd0\xcf\x11\xe0", "an old Office file"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"\x7fELF", "a program"),
    (b"MZ", "a program"),
)
_MARKDOWN_NAMES = (".md", ".markdown", ".mdown")
_MARKDOWN_MARKS = (b"\n# ", b"\n## ", b"\n- ", b"\n* ", b"](", b"\n```", b"\n| ")


def _text(data: bytes) -> str | None:
    """The bytes as UTF-8 text (a BOM allowed), or None when they are not text."""
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    controls = sum(1 for c in text[:4096] if ord(c) < 32 and c not in "\t\n\r\f")
    return None if controls else text


def document_format(*, data: bytes, filename: str) -> str:
    """`Document.Format` of these bytes: a PDF by its header, else UTF-8 text (Markdown when
    its name or its marks say so); anything else is refused (415) saying what it looks like."""
    if data[:1024].lstrip().startswith(b"%PDF-"):
        return Document.Format.PDF
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise ApplicationError(
                f"unsupported file type: {what}; upload a PDF, Markdown or plain text file", status_code=415
            )
    if _text(data) is None:
        raise ApplicationError(
            "unsupported file type: neither a PDF nor UTF-8 text; upload a PDF, Markdown or plain text file",
            status_code=415,
        )
    head = b"\n" + data[:20_000]
    if filename.lower().endswith(_MARKDOWN_NAMES) or any(mark in head for mark in _MARKDOWN_MARKS):
        return Document.Format.MARKDOWN
    return Document.Format.TEXT


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def document_path(*, tenant_id: int, sha256: str) -> str:
    """Where the file of this hash is kept, relative to the data directory."""
    return f"documents/{tenant_id}/{sha256[:2]}/{sha256}"


def file_store(*, relative: str, data: bytes) -> None:
    """Write the file (atomically: a reader never sees half of it); the same hash is the same bytes."""
    target = Path(settings.DATA_DIR) / relative
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(target)


def file_remove(*, relative: str) -> None:
    (Path(settings.DATA_DIR) / relative).unlink(missing_ok=True)


def file_read(*, relative: str) -> bytes:
    return (Path(settings.DATA_DIR) / relative).read_bytes()


class Unreadable(Exception):
    """The file holds no text to read; the message says why, for the user."""


def pdf_pages(data: bytes) -> list[str]:
    """The text of each page of a PDF (pypdf), at most DOCUMENT_MAX_PAGES of them. Raises
    `Unreadable` for a PDF that cannot be opened or has no text layer (a scan)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("the PDF is encrypted with a password")
        pages = [page.extract_text() or "" for page in reader.pages[: settings.DOCUMENT_MAX_PAGES]]
    except Unreadable:
        raise
    except (PdfReadError, Exception) as exc:  # a malformed file fails in many ways inside pypdf
        logger.info("unreadable PDF: %s", exc)
        raise Unreadable(f"the PDF cannot be read: {exc}") from exc
    if not any(text.strip() for text in pages):
        raise Unreadable(
            f"the PDF has no text layer ({len(pages)} page(s) of images, e.g. a scan); "
            "text recognition (OCR) is not supported: upload a PDF with text, or the text itself"
        )
    return pages


def page_texts(*, data: bytes, format: str) -> list[str]:
    """The text of each page: a PDF's pages, or a text file as one page."""
    if format == Document.Format.PDF:
        return pdf_pages(data)
    text = _text(data)
    if text is None or not text.strip():
        raise Unreadable("the file holds no text")
    return [text.replace("\r\n", "\n")]
