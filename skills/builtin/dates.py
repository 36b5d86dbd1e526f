"""Dates mentioned in a sentence, resolved against the session date.

English (and ISO) spans are parsed by `dateparser` (languages zh+en, RELATIVE_BASE = the
session date). dateparser 1.5 does not understand "3月12日" or "上周五", so Chinese
month-day and week-relative forms are resolved here (a few lines of calendar arithmetic).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

import dateparser

_ZH_NUM = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
_ZH_YMD = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_NUM_YMD = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_ZH_WEEKDAY = re.compile(r"(上上|上|下下|下|这|本)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天1-7])")
_ZH_RELDAY = {"前天": -2, "昨天": -1, "今天": 0, "明天": 1, "后天": 2}
_ZH_DAYS_AGO = re.compile(r"(\d+)\s*天前")
_EN_SPAN = re.compile(
    r"\b(?:(?:last|next|this)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"yesterday|today|tomorrow|\d+\s+(?:days?|weeks?)\s+ago|"
    r"(?:on\s+)(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*(?:,?\s+\d{4})?)\b",
    re.IGNORECASE,
)
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _zh_weekday(prefix: str | None, day: str, base: dt.date) -> dt.date:
    weekday = _ZH_NUM.get(day) or int(day)
    monday = base - dt.timedelta(days=base.weekday())
    if not prefix:
        # Bare "周五": the most recent one (conversations mostly report what happened).
        delta = (base.weekday() - (weekday - 1)) % 7
        return base - dt.timedelta(days=delta)
    weeks = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[prefix]
    return monday + dt.timedelta(weeks=weeks, days=weekday - 1)


def _chinese(sentence: str, base: dt.date) -> dt.date | None:
    if match := _ZH_YMD.search(sentence):
        year = int(match.group(1)) if match.group(1) else base.year
        return _safe_date(year, int(match.group(2)), int(match.group(3)))
    if match := _ZH_WEEKDAY.search(sentence):
        return _zh_weekday(match.group(1), match.group(2), base)
    for word, days in _ZH_RELDAY.items():
        if word in sentence:
            return base + dt.timedelta(days=days)
    if match := _ZH_DAYS_AGO.search(sentence):
        return base - dt.timedelta(days=int(match.group(1)))
    return None


def _english(sentence: str, base: dt.date) -> dt.date | None:
    match = _EN_SPAN.search(sentence)
    if not match:
        return None
    span = re.sub(r"^on\s+", "", match.group(), flags=re.IGNORECASE)
    lower = span.lower()
    has_month = any(m in lower for m in _MONTHS)
    prefer = "future" if lower.startswith("next") else "current_period" if has_month else "past"
    when = dateparser.parse(
        span,
        languages=["en", "zh"],
        settings={
            "RELATIVE_BASE": dt.datetime.combine(base, dt.time(12)),
            "PREFER_DATES_FROM": prefer,
            "REQUIRE_PARTS": ["day"] if has_month else [],
        },
    )
    return when.date() if when else None


def find_date(sentence: str, base: dt.date | None) -> dt.date | None:
    """The first date the sentence mentions, or None (relative forms need `base`)."""
    sentence = unicodedata.normalize("NFKC", sentence)  # fullwidth digits "３月"
    if match := _NUM_YMD.search(sentence):
        return _safe_date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    base = base or dt.date.today()
    return _chinese(sentence, base) or _english(sentence, base)


def parse_iso(value) -> dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None
