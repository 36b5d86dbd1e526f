"""Dates in facts, relative to the session date: `3 月 12 日`, `2025-03-12`, `上周五`, `last Friday`.

Chinese forms are matched here (dateparser misreads spaced `3 月 12 日` and turns words
like "we" into dates when searching free text); English phrases found by the patterns
below are handed to dateparser with the session date as its relative base.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
ZH_YMD = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
ZH_MD = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
ZH_WEEK = re.compile(r"(上上|上|本|这|下)?\s*(?:周|星期|礼拜)([一二三四五六日天])")
ZH_REL = {"前天": -2, "昨天": -1, "今天": 0, "明天": 1, "后天": 2}
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
EN_PHRASES = re.compile(
    rf"\b(?:(?:last|next|this)\s+{_DAYS}|(?:last|next|this)\s+(?:week|month|year)|yesterday|today|tomorrow|"
    rf"\d+\s+(?:days?|weeks?|months?)\s+ago|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}(?:,?\s+\d{{4}})?|on\s+{_DAYS})\b",
    re.I,
)


def _safe(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _zh_week(prefix: str | None, day: str, base: date) -> date:
    monday = base - timedelta(days=base.weekday())
    shift = {"上上": -14, "上": -7, "下": 7}.get(prefix or "", 0)
    target = monday + timedelta(days=shift + ZH_WEEKDAYS[day])
    if not prefix and target > base:
        target -= timedelta(days=7)  # a bare 周五 means the latest one
    return target


def _zh(text: str, base: date) -> date | None:
    if m := ZH_YMD.search(text):
        return _safe(int(m[1]), int(m[2]), int(m[3]))
    if m := ISO.search(text):
        return _safe(int(m[1]), int(m[2]), int(m[3]))
    if m := ZH_MD.search(text):
        found = _safe(base.year, int(m[1]), int(m[2]))
        # A month-day well after the session date is last year's (people talk about the past).
        if found and found > base + timedelta(days=31):
            found = _safe(base.year - 1, int(m[1]), int(m[2]))
        return found
    if m := ZH_WEEK.search(text):
        return _zh_week(m[1], m[2], base)
    for word, days in ZH_REL.items():
        if word in text:
            return base + timedelta(days=days)
    return None


def _en(text: str, base: date) -> date | None:
    import dateparser

    m = EN_PHRASES.search(text)
    if not m:
        return None
    phrase = re.sub(r"^on\s+", "", m.group(), flags=re.I)
    settings = {
        "RELATIVE_BASE": datetime(base.year, base.month, base.day, 12),
        "PREFER_DATES_FROM": "past",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    parsed = dateparser.parse(phrase, languages=["en"], settings=settings)
    return parsed.date() if parsed else None


def parse_occurred(text: str, base: date) -> date | None:
    """The date a fact talks about, or None."""
    return _zh(text or "", base) or _en(text or "", base)
