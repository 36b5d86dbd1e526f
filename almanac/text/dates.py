"""Dates mentioned in a sentence, resolved against the session date: the one date reader of
the project (the fact extractor, `memories.services.dates.parse_occurred`, the summarizer's
"does this sentence name a day" and quarters such as "Q3 2027" / "2027年第三季度").

English (and ISO) spans are parsed by `dateparser` (languages zh+en, RELATIVE_BASE = the
session date). dateparser 1.5 does not understand "3月12日", "三月五日" or "上周五", so
Chinese forms are resolved here (a few lines of calendar arithmetic).

A month-day without a year ("12月1日", "December 1") is the session year's, unless that
is more than a month after the session date: then it is last year's, because a memory
mostly reports what happened; when the sentence says future ("计划", "will", "next"..., or
states the date in the present: "my flight is on May 3") it is the other way round (a date
more than a month before the session is next year's). A bare weekday ("周五", "on Friday")
is the last one, or the next one when the sentence says future.
"去年/前年/今年/明年 3月5日" shift the year. Recurring times ("每周一", "一周三次",
"every Monday") are not dates.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

import dateparser
from dateutil.relativedelta import relativedelta

from almanac.search.text import CJK, word_matches
from almanac.text.amounts import zh_number

_GRACE = dt.timedelta(days=31)
_ZH_DIGITS = {char: i for i, char in enumerate("〇一二三四五六七八九")} | {"零": 0, "两": 2}
_ZH_NUMERAL = "〇零一二三四五六七八九十"
_ZH_NUM = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
_ZH_REL_YEAR = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_MONTH_OR_DAY = rf"\d{{1,2}}|[{_ZH_NUMERAL}]{{1,3}}"
# (?<!...) rather than \b: a CJK character is a word character, so "2024-03-05上线" has no \b.
_ZH_YMD = re.compile(
    rf"(?:(?P<year>\d{{4}}|[〇零一二三四五六七八九]{{4}})\s*年\s*|(?<!\d)(?P<year2>\d{{2}})\s*年\s*|"
    rf"(?P<rel>大前年|前年|去年|今年|明年|后年)\s*(?:的\s*)?)?"
    rf"(?<![\d{_ZH_NUMERAL}])(?P<month>{_MONTH_OR_DAY})\s*月\s*(?P<day>{_MONTH_OR_DAY})\s*[日号]"
)
_NUM_YMD = re.compile(r"(?<![\d.])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\.?\d)")
# "03/05/2026": day/month or month/day. Read only when just one order is a date (a part
# over 12 is the day) or both read alike; "03/05/2026" itself is ambiguous and skipped.
_NUM_MDY = re.compile(r"(?<![\d./])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")
# Not "一周三次" (three times a week), "每周一" (every Monday), "两周三天": counts and habits.
_ZH_WEEKDAY = re.compile(
    r"(?<![一每几两隔])(上上|上|下下|下|这|本)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天1-7])(?![\d次个遍]|天(?!气))"
)
_ZH_RELDAY = {"大前天": -3, "前天": -2, "昨天": -1, "今天": 0, "明天": 1, "后天": 2, "大后天": 3}
_ZH_RELDAY_WORD = re.compile("|".join(sorted(_ZH_RELDAY, key=len, reverse=True)))  # 大后天 before 后天
# "三天前", "两周后", "一个月以后": days, weeks or months from the day it was said ("3月前"
# is "before March" and "3日前" "before the 3rd": months need 个, days are 天).
_ZH_OFFSET = re.compile(
    r"(\d+|[一二三四五六七八九十两]{1,3})\s*(天|周|个星期|星期|个礼拜|礼拜|个月)\s*(前|以前|之前|后|以后|之后)"
)
# "下个月10号", "本月15日": a day of a named month ("10号" alone is as often a building or a line).
_ZH_MONTH_DAY = re.compile(r"(本月|这个月|下个?月|上个?月)\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*[号日]")
_WEEKDAYS_EN = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
RECURRING = re.compile(
    r"每(?:个)?(?:周|星期|礼拜|天|日|月|年|晚|早)|(?<![上下这本])(?:周|星期|礼拜|天|月)[一二三四五六七八九十两几\d]+(?:次|回|遍)|"
    r"隔(?:周|天|日)|(?<![昨今明前后])天天|"
    rf"\b(?:every|each)\s+(?:other\s+)?(?:day|morning|evening|night|week|weekday|weekend|month|year|{_WEEKDAYS_EN})\b|"
    r"\b(?:daily|weekly|monthly|yearly|biweekly|fortnightly)\b|"
    r"\b(?:once|twice|\w+\s+times)\s+(?:a|per|each)\s+(?:day|week|month|year)\b|"
    rf"\bon\s+(?:{_WEEKDAYS_EN})s\b",
    re.IGNORECASE,
)
# What follows 会/要 when they say "will" (a verb, a place or a time to come).
_ZH_PLAN_VERB = (
    r"在|去|来|把|给|于|向|跟|和|与|开始|上线|发布|交付|完成|提交|召开|举行|进行|推出|签|到|参加|出席|"
    r"通知|安排|启动|部署|发|[0-9０-９]|[一二三四五六七八九十]+月|下"
)
_FUTURE = re.compile(
    r"将|即将|计划|打算|预计|准备|截止|到期|届时|下个?月|"
    # 会/要 as "will": only before what is done next (会在…上线, 要在6月1日交付), never as a
    # noun's end (董事会批准, 发布会很成功, 开了个会) or a want (需要的, 想要, 要了一份).
    rf"(?<![事布讨乐例年大晚协工学社开机聚宴峰体理省都领误交商国总分早周班夜舞演博运庙展茶酒约])会(?={_ZH_PLAN_VERB})|"
    rf"(?<![需想只重主摘纪概提必首简机不])要(?={_ZH_PLAN_VERB})|"
    r"(?:\b(?:will|shall|going to|plan(?:s|ned)? to|scheduled|upcoming|next|due|deadline|expected to)|"
    # "we're launching on May 2", not "the invoice is outstanding"
    r"['’]ll|(?:\b(?:am|is|are)|['’](?:re|m))\s+\w+ing(?:\s+\w+){0,3}?\s+(?:on|in|by|at|next|this)\b)\b",
    re.IGNORECASE,
)
_EN_SPAN = re.compile(
    rf"\b(?:(?:last|next|this)\s+(?:{_WEEKDAYS_EN})|"
    r"yesterday|today|tomorrow|\d+\s+(?:days?|weeks?)\s+ago|"
    rf"(?:on\s+)(?:{_WEEKDAYS_EN})|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*(?:,?\s+\d{4})?)\b",
    re.IGNORECASE,
)
# Periods rather than days ("last month", "2 months ago"): dated only when the sentence is
# already known to be an event; otherwise "our budget this year" would become one.
_EN_PERIOD = re.compile(
    r"\b(?:(?:last|next|this)\s+(?:week|month|year)|\d+\s+months?\s+ago)\b", re.IGNORECASE
)
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
# "My flight is on May 3", "the renewal is 1 June": a date stated in the present is one to
# come (a report of the past says "was").
_STATED_DATE = re.compile(
    r"\b(?:is|are)\s+(?:on\s+|due\s+|set\s+for\s+)?"
    r"(?=(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))",
    re.IGNORECASE,
)


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _zh_int(text: str) -> int | None:
    """12, "十二", "二十五", "三十一", "二〇二四" -> int; None for what is not a number."""
    if text.isascii() and text.isdigit():
        return int(text)
    try:
        if "十" in text:
            tens, _, ones = text.partition("十")
            return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)
        value = 0
        for char in text:
            value = value * 10 + _ZH_DIGITS[char]
        return value
    except KeyError:
        return None


def month_day(month: int, day: int, base: dt.date, *, future: bool = False) -> dt.date | None:
    """A month-day without a year, by the rule in the module docstring."""
    when = _safe_date(base.year, month, day)
    if when and not future and when > base + _GRACE:
        return _safe_date(base.year - 1, month, day)
    if when and future and when < base - _GRACE:
        return _safe_date(base.year + 1, month, day)
    return when


def _zh_ymd(match: re.Match, sentence: str, base: dt.date) -> dt.date | None:
    month, day = _zh_int(match["month"]), _zh_int(match["day"])
    if month is None or day is None:
        return None
    if match["year"]:
        year = _zh_int(match["year"])
        return _safe_date(year, month, day) if year else None
    if match["year2"]:  # "25年5月3日" is 2025, "99年5月3日" 1999: the century that puts it nearest
        years = [century + int(match["year2"]) for century in (1900, 2000, 2100)]
        year = min(years, key=lambda y: (abs(y - base.year), -1 if y < base.year else 1))
        return _safe_date(year, month, day)
    if match["rel"]:
        return _safe_date(base.year + _ZH_REL_YEAR[match["rel"]], month, day)
    ahead = bool(_FUTURE.search(sentence)) or _zh_stated(match, sentence)
    return month_day(month, day, base, future=ahead)


# "航班是5月3日", "会议定在5月3日": a date stated or set is one to come; "合同是5月3日签的",
# "是5月3日开过会" report the past (是…的, 了, 过 after the date, in its clause).
_ZH_STATED_BEFORE = re.compile(r"(?:是|定在|定于|安排在|改到|改在|推迟到|延期到|延到)\s*$")
_ZH_PAST_AFTER = re.compile(r"^[^，。；！？,.;!?]*[了过的]")


def _zh_stated(match: re.Match, sentence: str) -> bool:
    before, after = sentence[: match.start()], sentence[match.end() :]
    return bool(_ZH_STATED_BEFORE.search(before)) and not _ZH_PAST_AFTER.search(after)


def _zh_weekday(prefix: str | None, day: str, base: dt.date, *, future: bool = False) -> dt.date:
    weekday = _ZH_NUM.get(day) or int(day)
    monday = base - dt.timedelta(days=base.weekday())
    if not prefix:
        # Bare "周五": the most recent one (conversations mostly report what happened), or
        # the next one when the sentence says future ("周五我们将发布", "我周五要去上海").
        if future:
            return base + dt.timedelta(days=(weekday - 1 - base.weekday()) % 7)
        delta = (base.weekday() - (weekday - 1)) % 7
        return base - dt.timedelta(days=delta)
    weeks = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[prefix]
    return monday + dt.timedelta(weeks=weeks, days=weekday - 1)


def _chinese(sentence: str, base: dt.date) -> dt.date | None:
    match = _ZH_YMD.search(sentence)
    if RECURRING.search(sentence):
        # "每周一开例会", "每年3月5日": a habit, not a day (one with its year still is one)
        return (
            _zh_ymd(match, sentence, base)
            if match and (match["year"] or match["year2"] or match["rel"])
            else None
        )
    if match:
        return _zh_ymd(match, sentence, base)
    if match := _ZH_WEEKDAY.search(sentence):
        return _zh_weekday(match.group(1), match.group(2), base, future=bool(_FUTURE.search(sentence)))
    if match := next(word_matches(_ZH_RELDAY_WORD, sentence), None):
        return base + dt.timedelta(days=_ZH_RELDAY[match.group()])
    if (match := _ZH_OFFSET.search(sentence)) and (count := _zh_int(match.group(1))) is not None:
        sign = -1 if match.group(3).endswith("前") else 1
        if match.group(2) == "天":
            return base + dt.timedelta(days=sign * count)
        if match.group(2) == "个月":
            return base + relativedelta(months=sign * count)
        return base + dt.timedelta(weeks=sign * count)
    if (match := _ZH_MONTH_DAY.search(sentence)) and (day := _zh_int(match.group(2))) is not None:
        shift = {"本": 0, "这": 0, "下": 1, "上": -1}[match.group(1)[0]]
        first = base.replace(day=1) + relativedelta(months=shift)
        return _safe_date(first.year, first.month, day)
    return None


def _english(sentence: str, base: dt.date, periods: bool) -> dt.date | None:
    match = _EN_SPAN.search(sentence) or (periods and _EN_PERIOD.search(sentence))
    if not match or (RECURRING.search(sentence) and not re.search(r"\d{4}", match.group())):
        return None
    span = re.sub(r"^on\s+", "", match.group(), flags=re.IGNORECASE)
    lower = span.lower()
    has_month = any(m in lower for m in _MONTHS)
    ahead = bool(_FUTURE.search(sentence) or _STATED_DATE.search(sentence))
    bare_weekday = re.fullmatch(_WEEKDAYS_EN, lower) is not None  # "on Friday"
    if lower.startswith("next") or (bare_weekday and ahead):
        prefer = "future"
    else:
        prefer = "current_period" if has_month else "past"
    when = dateparser.parse(
        span,
        languages=["en", "zh"],
        settings={
            "RELATIVE_BASE": dt.datetime.combine(base, dt.time(12)),
            "PREFER_DATES_FROM": prefer,
            "REQUIRE_PARTS": ["day"] if has_month else [],
        },
    )
    if when and has_month and not re.search(r"\d{4}", span):
        return month_day(when.month, when.day, base, future=ahead)
    return when.date() if when else None


def _slash_date(first: int, second: int, year: int) -> dt.date | None:
    """A d/m/y or m/d/y date when only one reading is a date, or both are the same day."""
    readings = {when for when in (_safe_date(year, first, second), _safe_date(year, second, first)) if when}
    return readings.pop() if len(readings) == 1 else None


def find_date(sentence: str, base: dt.date | None, *, periods: bool = False) -> dt.date | None:
    """The first date the sentence mentions, or None (relative forms need `base`).

    `periods`: also "last month", "2 months ago" (as that day), for a sentence known to be
    an event."""
    sentence = unicodedata.normalize("NFKC", sentence)  # fullwidth digits "３月"
    if match := _NUM_YMD.search(sentence):
        return _safe_date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    if (match := _NUM_MDY.search(sentence)) and (when := _slash_date(*map(int, match.groups()))):
        return when
    base = base or dt.date.today()
    return _chinese(sentence, base) or _english(sentence, base, periods)


def parse_iso(value) -> dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None


# A quarter of a year: "Q3 2027", "Q3 of 2027", "2027 Q3", "2027年第三季度", "2027年Q3".
QUARTER = re.compile(
    r"(?<![A-Za-z0-9])[Qq](?P<q>[1-4])(?:\s*(?:of\s+)?|\s*[-/]\s*)(?P<year>\d{4})(?!\d)|"
    r"(?<!\d)(?P<year2>\d{4})\s*(?:年\s*)?(?:[Qq](?P<q2>[1-4])(?![0-9])|第?(?P<zh>[一二三四1-4])季度)"
)


def find_quarter(text: str) -> tuple[dt.date, dt.date] | None:
    """The first and last day of the first quarter of a year `text` names, or None."""
    match = QUARTER.search(unicodedata.normalize("NFKC", text))
    if match is None:
        return None
    year = int(match["year"] or match["year2"])
    number = int(match["q"] or match["q2"] or 0) or zh_number(match["zh"]) or int(match["zh"])
    first = dt.date(year, 3 * number - 2, 1)
    return first, first + relativedelta(months=3, days=-1)


def _first_char(chars: str, body: str) -> re.Pattern:
    """`body` (case-insensitive) behind a lookahead for the characters a match can start
    with: Python's regex engine otherwise tries every alternative at every position
    (for the date pattern 24 -> 10 us per sentence, the summarizer's largest cost on text
    it has not seen before). The same matches as `body` alone (tested)."""
    return re.compile(f"(?=[{chars}])(?:{body})", re.IGNORECASE)


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


# Relative dates, which mean nothing once the session is over: the resolved day goes after them.
_RELATIVE = re.compile(
    r"\b(?:yesterday|today|tomorrow|(?:last|next|this)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"\d+\s+days?\s+ago)\b|大前天|前天|昨天|今天|明天|后天|大后天|\d+\s*天前|"
    r"(?:上上|下下|上|下|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天1-7]",
    re.IGNORECASE,
)


# The day written after a relative date by `dated_text` ("上周五（2025-03-14）",
# "Last Friday (2025-03-14)"): what readers comparing texts strip first.
RESOLVED_DATE = re.compile(r" ?[（(]\d{4}-\d{2}-\d{2}[）)]")


def dated_text(sentence: str, date) -> str:
    """ "上周五我们决定…" → "上周五（2025-03-14）我们决定…", "Last Friday we…" → "Last Friday
    (2025-03-14) we…": the memory keeps its day after the session that dated it is gone."""
    match = _RELATIVE.search(sentence)
    if match is None or date.isoformat() in sentence:
        return sentence
    mark = f"（{date.isoformat()}）" if CJK.search(match.group()) else f" ({date.isoformat()})"
    return sentence[: match.end()] + mark + sentence[match.end() :]


def resolve_relative_dates(text: str, base) -> str:
    """Every relative date of `text` followed by its day, as the fact extractor writes facts."""
    return _RELATIVE.sub(
        lambda m: dated_text(m.group(), d) if (d := find_date(m.group(), base)) else m.group(), text
    )


# A date written whole, with its year: "March 1, 2026", "1 March 2026", "Mar. 1st, 2026".
_EN_FULL = re.compile(
    r"\b(?:(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?"
    r"|(?P<day2>\d{1,2})(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?(?P<mon2>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*\.?,?)\s+(?P<year>\d{4})\b",
    re.IGNORECASE,
)


def dates_stated(text: str) -> list[tuple[int, dt.date]]:
    """Every date `text` writes whole, with its year (ISO, "2026年3月1日", "March 1, 2026",
    "1 March 2026"), in order, with where each starts: the dates of a document, which
    has no session date to resolve "Friday" or "3月1日" against."""
    text = unicodedata.normalize("NFKC", text)
    found: dict[int, dt.date] = {}
    for match in _NUM_YMD.finditer(text):
        if when := _safe_date(int(match.group(1)), int(match.group(2)), int(match.group(3))):
            found[match.start()] = when
    for match in _ZH_YMD.finditer(text):
        year, month, day = (_zh_int(match[k]) if match[k] else None for k in ("year", "month", "day"))
        if year and month and day and (when := _safe_date(year, month, day)):
            found[match.start()] = when
    for match in _EN_FULL.finditer(text):
        month = _MONTHS.index((match["mon"] or match["mon2"]).lower()) + 1
        if when := _safe_date(int(match["year"]), month, int(match["day"] or match["day2"])):
            found[match.start()] = when
    return sorted(found.items())
