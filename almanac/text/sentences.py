"""The one sentence splitter: sentences with their end punctuation, an abbreviation's
full stop ("Mr.", "e.g.") and a decimal point ("3.5") not ending one; a newline always does.
Also the speaker turns of a transcript ("user: ...")."""

from __future__ import annotations

import re

from almanac.search.text import ROLE_PREFIX
from almanac.text.normalize import normalize

_ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "st",
    "jr",
    "sr",
    "vs",
    "etc",
    "inc",
    "ltd",
    "co",
    "corp",
    "e.g",
    "i.e",
    "no",
    "fig",
    "approx",
}
# Where a sentence may end: a run of end marks (a closing quote or bracket with them), a full
# stop before a blank or the end, an ellipsis, a newline.
BOUNDARY = re.compile(r"[。！？!?；;]+[”’」』)]?|\.(?=\s|$)|…+|\n")


def split_role(line: str) -> tuple[str | None, str]:
    match = ROLE_PREFIX.match(line)
    if not match:
        return None, line.strip()
    return match.group("role").lower(), line[match.end() :].strip()


def _ends_abbreviation(piece: str) -> bool:
    words = piece.rstrip(".").split()
    if not words:
        return False
    last = words[-1].lower()
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())


def split_sentences(text: str) -> list[str]:
    """Sentences in order, with their end punctuation; newlines always end a sentence."""
    sentences, pos = [], 0
    for end in [*sentence_ends(text), len(text)]:
        piece, pos = text[pos:end].strip(), end
        if piece:
            sentences.append(piece)
    return sentences


def turns(text: str) -> list[tuple[str | None, str]]:
    """(role, text) per non-empty line; a line without a role prefix has role None."""
    out = []
    for line in normalize(text).split("\n"):
        role, body = split_role(line)
        if body:
            out.append((role, body))
    return out


def sentence_ends(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """The positions in `text[start:end]` where a sentence ends, by the rule of
    `split_sentences` (an abbreviation's full stop is none): where a chunk may be cut."""
    end = len(text) if end is None else end
    found = []
    for match in BOUNDARY.finditer(text, start):
        if match.end() > end:
            break
        if match.group() == "." and _ends_abbreviation(text[max(0, match.start() - 40) : match.end()]):
            continue
        found.append(match.end())
    return found
