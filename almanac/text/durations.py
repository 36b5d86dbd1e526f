"""Durations a sentence states, in English and Chinese: "30 days", "twelve (12) months",
"a one-year term", "net 30", "三十日", "两年", "12个月", "十五个工作日"; and the date
arithmetic a contract needs (a term's last day, the last day to give notice).

A number that is part of a date is not a duration: "2026年3月1日" holds no "1日", and
"每月5日" (a day of the month) no "5日"; "三月" is March, so a Chinese month count needs
"个月". A count of business days ("10 business days", "十个工作日") skips weekends.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace

from dateutil.relativedelta import relativedelta

from almanac.text.amounts import zh_number

UNITS = ("day", "week", "month", "year")
_LIMITS = {"day": 3660, "week": 520, "month": 1200, "year": 100}
_EN_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "fifteen": 15, "eighteen": 18,
    "twenty": 20, "twenty-four": 24, "thirty": 30, "thirty-six": 36, "forty-five": 45, "sixty": 60,
    "ninety": 90, "hundred": 100, "one hundred twenty": 120, "one hundred eighty": 180,
}  # fmt: skip
_EN_NUMBER = "|".join(re.escape(w) for w in sorted(_EN_WORDS, key=len, reverse=True))
_EN = re.compile(
    rf"(?<![\w.,])(?:(?P<word>{_EN_NUMBER})\s*(?:\(\s*(?P<paren>\d{{1,4}})\s*\)\s*)?|(?P<num>\d{{1,4}})\s*)"
    r"(?:-\s*)?(?P<business>business\s+|working\s+|calendar\s+)?(?P<unit>day|week|month|year)s?(?:['’]s?)?"
    r"(?![a-z])",
    re.IGNORECASE,
)
_NET = re.compile(r"\bnet\s*(?P<num>\d{1,3})\b", re.IGNORECASE)
_ZH = re.compile(
    r"(?<![\d月〇零一二三四五六七八九十两百第])(?P<num>\d{1,4}|[〇零一二三四五六七八九十两百]{1,4})\s*"
    r"(?:[（(]\s*\d{1,4}\s*[)）]\s*)?(?P<business>个?工作)?(?P<unit>个月|年|日|天|周|星期|个星期)"
    r"(?![份度底初末])"
)
_ZH_UNITS = {
    "个月": "month",
    "年": "year",
    "日": "day",
    "天": "day",
    "周": "week",
    "星期": "week",
    "个星期": "week",
}
# What is a date, not a count: masked before reading ("2026年3月1日", "3月1日", "2026-03-01").
_ZH_DATE = re.compile(
    r"(?:\d{2,4}|[〇零一二三四五六七八九]{2,4})\s*年\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*月"
    r"(?:\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*[日号])?|"
    r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*月\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*[日号]"
)


@dataclass(frozen=True)
class Duration:
    """`count` `unit`s ("day", "week", "month", "year"); `business`: working days only;
    `start`, `end`: its span in the text, `shown`: the text there."""

    count: int
    unit: str
    business: bool
    start: int
    end: int
    shown: str = ""

    @property
    def spelled(self) -> str:
        """One spelling: "30 days", "1 year", "10 business days"."""
        unit = f"business {self.unit}" if self.business else self.unit
        return f"{self.count} {unit}" + ("" if self.count == 1 else "s")

    def shift(self, when: dt.date, sign: int = 1) -> dt.date:
        """`when` moved by this duration (forward, or back with `sign` -1)."""
        if self.business:
            step, left = dt.timedelta(days=sign), self.count
            while left:
                when += step
                left -= when.weekday() < 5
            return when
        delta = {
            "day": relativedelta(days=self.count),
            "week": relativedelta(weeks=self.count),
            "month": relativedelta(months=self.count),
            "year": relativedelta(years=self.count),
        }[self.unit]
        return when + delta if sign > 0 else when - delta


def _masked(text: str) -> str:
    return _ZH_DATE.sub(lambda m: " " * len(m.group()), text)


def _english(text: str) -> list[Duration]:
    found = []
    for match in _EN.finditer(text):
        if match["word"]:
            count = int(match["paren"]) if match["paren"] else _EN_WORDS[match["word"].lower()]
        else:
            count = int(match["num"])
        business = (match["business"] or "").strip().lower() in ("business", "working")
        found.append(Duration(count, match["unit"].lower(), business, match.start(), match.end()))
    for match in _NET.finditer(text):
        found.append(Duration(int(match["num"]), "day", False, match.start(), match.end()))
    return found


def _chinese(text: str) -> list[Duration]:
    found = []
    for match in _ZH.finditer(text):
        count = int(match["num"]) if match["num"].isdigit() else zh_number(match["num"])
        if count is None:
            continue
        found.append(
            Duration(count, _ZH_UNITS[match["unit"]], bool(match["business"]), match.start(), match.end())
        )
    return found


def durations(text: str) -> list[Duration]:
    """Every duration `text` states, in order (none of a date's numbers)."""
    masked = _masked(text)
    found = [d for d in _english(masked) + _chinese(masked) if 0 < d.count <= _LIMITS[d.unit]]
    return [replace(d, shown=text[d.start : d.end].strip()) for d in sorted(found, key=lambda d: d.start)]


def term_end(start: dt.date, term: Duration) -> dt.date:
    """The last day of a term of `term` that starts on `start` (a year from 2026-01-01 ends 2026-12-31)."""
    return term.shift(start) - dt.timedelta(days=1)
