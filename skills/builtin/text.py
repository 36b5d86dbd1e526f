"""Sentence splitting and cue patterns shared by the offline extractor and summarizer."""

from __future__ import annotations

import re
import unicodedata

from almanac.search.text import CJK, ROLE_PREFIX  # shared with search

LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*")


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
_BOUNDARY = re.compile(r"[。！？!?；;]+[”’」』)]?|\.(?=\s|$)|…+|\n")


def _first_char(chars: str, body: str) -> re.Pattern:
    """`body` (case-insensitive) behind a lookahead for the characters a match can start
    with: Python's regex engine otherwise tries every alternative at every position
    (for the date pattern 24 -> 10 us per sentence, the summarizer's largest cost on text
    it has not seen before). The same matches as `body` alone (tested)."""
    return re.compile(f"(?=[{chars}])(?:{body})", re.IGNORECASE)


# Every alternative starts with a currency sign, a digit or a currency code.
AMOUNT_BODY = (
    r"(?:[$€£¥￥]\s?\d[\d,]*(?:\.\d+)?\s?(?:[kKmMbB](?:n)?\b|万|亿|千)?)"
    r"|(?:\d[\d,]*(?:\.\d+)?\s?(?:%|％|万元|亿元|元|万|亿|美元|欧元|块|USD|EUR|RMB|CNY|k\b|K\b|M\b|million|billion|thousand|dollars?|euros?))"
    r"|(?:(?:USD|EUR|RMB|CNY)\s?\d[\d,]*(?:\.\d+)?)"
)
AMOUNT = _first_char(r"$€£¥￥\duerc", AMOUNT_BODY)
IDENT = re.compile(r"\b(?=[A-Za-z0-9_/#-]*\d)[A-Za-z]{2,}[A-Za-z0-9]*(?:[-_/#][A-Za-z0-9]+)+\b|#\d{2,}\b")
# Every alternative starts with a digit, a month or day word, or one of these CJK characters.
DATE_TEXT_BODY = (
    r"\d{4}[-/.年]\s*\d{1,2}(?:[-/.月]\s*\d{1,2}\s*[日号]?)?|\d{1,2}\s*月\s*\d{1,2}\s*[日号]|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
    r"\b(?:last|next|this)\s+(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b|\b(?:yesterday|today|tomorrow)\b|"
    r"\b(?:on\s+)(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\b\d+\s+(?:days?|weeks?)\s+ago\b|"
    r"(?:上|下|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天1-7]|(?:周|星期|礼拜)[一二三四五六日天]|"
    r"昨天|前天|今天|明天|后天|\d+\s*天前|(?:Q[1-4]|[一二三四]季度)"
)
DATE_TEXT = _first_char(r"\d上下这本周星礼昨前今明后一二三四qjfmasondlty", DATE_TEXT_BODY)


# Runs of blanks that normalizing changes: any with a tab or wide space, or two or more.
# (A lone space is left alone: matching every space made this ~40% of a summary.)
_SPACES = re.compile(r"[\t\u00a0\u3000][ \t\u00a0\u3000]*| [ \t\u00a0\u3000]+")


def normalize(text: str) -> str:
    # NFC, not NFKC: NFKC would turn Chinese "，。：" into ASCII in the facts we return.
    text = unicodedata.normalize("NFC", text or "").replace("\r\n", "\n").replace("\r", "\n")
    return _SPACES.sub(" ", text)


def is_cjk(text: str) -> bool:
    cjk = len(CJK.findall(text))
    return cjk > 0 and cjk >= len(LATIN_WORD.findall(text))


def content_size(text: str) -> int:
    """A language-neutral size: CJK characters plus two per Latin word or number."""
    return len(CJK.findall(text)) + 2 * len(LATIN_WORD.findall(text))


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
    sentences: list[str] = []
    pending = ""
    pos = 0
    for match in _BOUNDARY.finditer(text):
        piece = pending + text[pos : match.end()]
        pos = match.end()
        if match.group() == "." and _ends_abbreviation(piece):
            pending = piece
            continue
        pending = ""
        if piece.strip():
            sentences.append(piece.strip())
    tail = (pending + text[pos:]).strip()
    if tail:
        sentences.append(tail)
    return sentences


def turns(text: str) -> list[tuple[str | None, str]]:
    """(role, text) per non-empty line; a line without a role prefix has role None."""
    out = []
    for line in normalize(text).split("\n"):
        role, body = split_role(line)
        if body:
            out.append((role, body))
    return out
