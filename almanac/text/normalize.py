"""One spelling for text before it is read: blanks, line ends, Unicode form; and the
language-neutral measures of how much a text says."""

from __future__ import annotations

import re
import unicodedata

from almanac.search.text import CJK, THOUSANDS, simplified

LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*")


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


# English numbers written as words, as digits: "ten thousand dollars" is "$10,000", and
# "the tenth of March" the "10th".
_EN_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_EN_TENS = {
    w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
_EN_ORDINALS = {
    w: i
    for i, w in enumerate(
        "first _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split(),
        1,
    )
    if w != "_"  # "second" is a unit of time as often
} | {"twentieth": 20, "thirtieth": 30}
_EN_NUMBER_WORD = re.compile(
    rf"\b(?:(?P<tens>{'|'.join(_EN_TENS)})(?:[- ](?P<unit>{'|'.join(_EN_ONES[1:10] + [w for w in _EN_ORDINALS if _EN_ORDINALS[w] < 10])}))?"
    rf"|(?P<word>{'|'.join(_EN_ONES + list(_EN_ORDINALS))}))\b",
    re.IGNORECASE,
)

_ORDINAL_SUFFIX = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)  # one spelling: 21th


def _spelt_number(match: re.Match) -> str:
    words = [w.lower() for w in match.group("tens", "unit", "word") if w]
    value, ordinal = 0, False
    for word in words:
        if word in _EN_TENS:
            value += _EN_TENS[word]
        elif word in _EN_ORDINALS:
            value, ordinal = value + _EN_ORDINALS[word], True
        else:
            value += _EN_ONES.index(word)
    return f"{value}th" if ordinal else str(value)


def spelled_numbers(text: str) -> str:
    """One spelling for numbers and script: NFKC (full-width digits), no thousands
    separators, simplified Chinese (週 is 周), numbers in words as digits, one ordinal suffix."""
    text = simplified(THOUSANDS.sub("", unicodedata.normalize("NFKC", text)))
    return _ORDINAL_SUFFIX.sub(r"\1th", _EN_NUMBER_WORD.sub(_spelt_number, text))
