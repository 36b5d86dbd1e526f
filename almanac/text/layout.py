"""Text as a page lays it out: lines broken by the page's width joined back into the
sentences and paragraphs they belong to (what a PDF's text layer gives, in zh and en)."""

from __future__ import annotations

import re

from almanac.text.normalize import is_cjk

# A line that ends a paragraph: end punctuation, a colon (a label: "Party A: Acme"), or a
# line that is only a heading number.
_ENDS = re.compile(r"[。！？!?；;：:.…”」』]\s*$")
# A line that cannot start a sentence: it goes on from the line before, whatever that ends
# with ("... Acme Ltd." + "(the Supplier) ...", "... see p." + "12").
_GOES_ON = re.compile(r"^[a-z(（,，、]")
# A line that starts a new block whatever the line before it: a numbered clause, a bullet,
# an article, a label of its own ("甲方：", "Party A:").
_STARTS = re.compile(
    r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)、](?!\d)\s?|[（(]?[一二三四五六七八九十]+[）)、.]|第[一二三四五六七八九十百\d]+[条章节款]|"
    r"[-•*·]\s|(?:article|section|clause|schedule|annex|exhibit)\s+\w+|[^\s:：]{1,20}[：:])",
    re.IGNORECASE,
)


def width(line: str) -> int:
    """A line's width as a page sets it: a Chinese character is two Latin ones wide."""
    return len(line) + sum(1 for char in line if is_cjk(char))


def unwrap(text: str) -> str:
    """`text` with each line that continues the one before it joined to it (with a space
    between Latin words, none between Chinese characters); blank lines kept.

    A line continues into the next when it fills the page's width (a wrapped line) and ends
    without end punctuation, and the next one starts no block of its own; a line well
    short of the width ends its paragraph (a heading, a title, a paragraph's last line)."""
    lines = [raw.strip() for raw in text.splitlines()]
    full = 0.75 * max((width(line) for line in lines), default=0)
    out: list[str] = []
    wrapped = False
    for line in lines:
        if not line:
            out.append("")
            wrapped = False
            continue
        previous = out[-1] if out else ""
        ends = _ENDS.search(previous) and not _GOES_ON.match(line)
        if previous and wrapped and not ends and not _STARTS.match(line):
            glue = "" if is_cjk(previous[-1]) and is_cjk(line[0]) else " "
            out[-1] = previous + glue + line
        else:
            out.append(line)
        wrapped = width(line) >= full
    return "\n".join(out)
