"""The passage of a text that answers a query, and where the query's words are in it: what a
search result shows and marks.

A query's words are read as search reads them (`almanac.search.text.segment`: English
stemmed, Chinese segmented, ids whole, question words and particles dropped), so a passage
is marked for the words that found it: "renewal" marks "renewed", "续约日期是什么时候"
marks 续约 and 日期.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from almanac.search.text import CJK, is_id, segment, simplified
from almanac.text.sentences import sentence_ends

PASSAGE_CHARS = 240
_WORD = re.compile(r"[^\W_]+(?:'[a-z]+)?", re.UNICODE)


@dataclass(frozen=True)
class Passage:
    """An excerpt of a text: `marks` are (start, end) spans of `text` that hold a query word;
    `terms` how many distinct query words it holds; `before`/`after` whether the text goes
    on before or after it."""

    text: str
    marks: tuple[tuple[int, int], ...] = ()
    terms: int = 0
    before: bool = False
    after: bool = False

    def pieces(self) -> list[tuple[str, bool]]:
        """The excerpt as (text, marked) pieces, in order: a caller escapes each piece."""
        out, pos = [], 0
        for start, end in self.marks:
            if start > pos:
                out.append((self.text[pos:start], False))
            out.append((self.text[start:end], True))
            pos = end
        if pos < len(self.text):
            out.append((self.text[pos:], False))
        return out


def query_terms(query: str, *, ignore: Iterable[str] = ()) -> list[str]:
    """The query's search words, without those of `ignore` (e.g. the name of the page the
    passage is on: every section of Vercel's page says "Vercel", so it picks none)."""
    ignored = {t for text in ignore for t in segment(text)}
    return [t for t in dict.fromkeys(segment(query)) if t not in ignored]


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    """An English word as search indexes it ("" for a stop word)."""
    tokens = segment(word)
    return tokens[0] if len(tokens) == 1 else ""


def term_spans(text: str, terms: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, term) of each place a term occurs in `text`, in order, none overlapping:
    an English word whose stem is a term, a Chinese word or an id wherever it occurs (case
    and traditional characters aside)."""
    terms = set(terms)
    if not terms or not text:
        return []
    found = []
    for match in _WORD.finditer(text):
        word = match.group()
        if not CJK.search(word) and _stem(word) in terms:
            found.append((match.start(), match.end(), _stem(word)))
    # Read as simplified Chinese where that keeps every offset (t2s maps a character to one).
    plain = simplified(text)
    haystack = (plain if len(plain) == len(text) else text).lower()
    for term in terms:
        if not (CJK.search(term) or is_id(term)):
            continue
        for match in re.finditer(re.escape(term), haystack):
            found.append((match.start(), match.end(), term))
    found.sort(key=lambda span: (span[0], -span[1]))
    merged: list[tuple[int, int, str]] = []
    for span in found:
        if merged and span[0] < merged[-1][1]:
            continue  # inside a longer word found first (日期 in 续约日期)
        merged.append(span)
    return merged


def _sentences(text: str) -> list[tuple[int, int]]:
    bounds, pos = [], 0
    for end in [*sentence_ends(text), len(text)]:
        if text[pos:end].strip():
            bounds.append((pos, end))
        pos = end
    return bounds


def best_passage(text: str, terms: Iterable[str], *, width: int = PASSAGE_CHARS) -> Passage:
    """The sentence holding the most distinct query words (the first of equals; the text's
    start when none holds one), widened with the sentences after it up to `width`
    characters, or cut to `width` around its first mark when longer."""
    text = text or ""
    spans = term_spans(text, list(terms))
    best, best_terms = (0, min(len(text), width)), 0
    for start, end in _sentences(text):
        held = len({term for s, e, term in spans if start <= s and e <= end})
        if held > best_terms:
            best, best_terms = (start, end), held
    start, end = best
    if end - start > width:  # a long sentence: the window around its first mark
        first = next((s for s, e, _ in spans if start <= s < end), start)
        start = max(start, min(first - width // 4, end - width))
        end = start + width
    else:
        end = max(end, min(len(text), start + width)) if best_terms == 0 else _widen(text, start, end, width)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    marks = tuple((s - start, e - start) for s, e, _ in spans if start <= s and e <= end)
    return Passage(text[start:end], marks, best_terms, before=start > 0, after=end < len(text))


def _widen(text: str, start: int, end: int, width: int) -> int:
    """The end after the following whole sentences of the same line that still fit in
    `width` (a compiled page has one message a line)."""
    for s, e in _sentences(text):
        if s < end:
            continue
        if "\n" in text[end - 1 : s + 1] or e - start > width:
            break
        end = e
    return end
