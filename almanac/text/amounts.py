"""The one reader of amounts and other numbers with a unit: value, currency, magnitude and
period, in English and Chinese.

"$1.2 billion per year" is 1,200,000,000 USD a year, "3千万元" 30,000,000 CNY once,
"¥250万/年" 2,500,000 CNY a year, "80k" 80,000 without a currency; "Q3 2027" is a date (a
quarter, `almanac.text.dates`), never an amount. A number is read with what says how much
it is: a currency before it ("$", "US$", "¥", "RMB"), a magnitude ("k", "million", "万",
"千万", "亿") and a unit after it (a currency word, "%", "pm", "minutes", "天"), and for an
amount of money the period it recurs on ("/yr", "per month", "每年"; "annual", "年费" just
before it). Each has one spelling (`Quantity.fact`): "30000·cny" for 3万元, 三万元 and
30000元, "3000000·usd" for "$3M" and "$3 million", "2500000·cny/year" for "¥250万/年" and
"每年250万元".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

MAGNITUDES = {
    "hundred": 2, "百": 2, "k": 3, "thousand": 3, "千": 3, "万": 4, "十万": 5,
    "m": 6, "mn": 6, "million": 6, "百万": 6, "千万": 7, "亿": 8, "bn": 9,
    "billion": 9, "十亿": 9, "trillion": 12, "万亿": 12,
}  # fmt: skip
CURRENCIES = {
    "$": "usd", "us$": "usd", "usd": "usd", "dollar": "usd", "dollars": "usd", "美元": "usd", "美金": "usd",
    "¥": "cny", "￥": "cny", "rmb": "cny", "cny": "cny", "yuan": "cny", "元": "cny", "块": "cny", "人民币": "cny",
    "€": "eur", "eur": "eur", "euro": "eur", "euros": "eur", "欧元": "eur",
    "£": "gbp", "gbp": "gbp", "pound": "gbp", "pounds": "gbp", "英镑": "gbp",
    "jpy": "jpy", "日元": "jpy", "hkd": "hkd", "港元": "hkd", "港币": "hkd",
}  # fmt: skip
# What a unit next to a number changes: currency, percent, time of day, duration, size.
# Synonyms share one spelling.
UNITS = {
    **CURRENCIES,
    "%": "%", "％": "%", "percent": "%", "pct": "%", "am": "am", "a.m.": "am", "pm": "pm", "p.m.": "pm",
    "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute", "分钟": "minute",
    "h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour", "小时": "hour",
    "折": "折", "day": "day", "days": "day", "天": "day", "日": "日", "号": "日", "week": "week", "weeks": "week",
    "周": "week", "星期": "week", "month": "month", "months": "month", "个月": "month", "月": "月",
    "year": "year", "years": "year", "yr": "year", "yrs": "year", "年": "年", "岁": "岁", "点": "点",
    "点半": "点半", "点一刻": "点一刻", "点三刻": "点三刻",  # 3点半 is not 3点
    "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "kg": "kg", "g": "g", "km": "km", "cm": "cm", "mm": "mm",
}  # fmt: skip
_CURRENCY_BEFORE = ["$", "us$", "¥", "￥", "€", "£", "usd", "rmb", "cny", "eur", "gbp", "hkd", "jpy"]


def _alternation(words) -> str:
    # Longest first ("million" before "m", "千万" before "千"); a Latin word must end where
    # the word ends.
    return "|".join(
        re.escape(w) + ("(?![a-z])" if w[-1].isascii() and w[-1].isalpha() else "")
        for w in sorted(words, key=len, reverse=True)
    )


# A number with what says how much it is: currency before, magnitude, unit after (any may
# be missing: a bare number matches too, and is a fact as it stands).
NUMBER_WITH_UNIT = re.compile(
    rf"(?P<pre>{_alternation(_CURRENCY_BEFORE)})?"
    r"\s?(?P<num>\d{1,3}(?:[,，]\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)*|[一二三四五六七八九十两]+)"
    rf"\s?(?P<mag>{_alternation(MAGNITUDES)})?\s?(?P<unit>{_alternation(UNITS)})?",
    re.IGNORECASE,
)
# The period an amount of money recurs on, written after it.
_PERIOD_AFTER = re.compile(
    r"\s*(?:/\s*(?:yr|year|y|annum|mo|month|年|月)(?![A-Za-z])|per\s+(?:year|annum|month)\b|"
    r"a\s+(?:year|month)\b|annually\b|yearly\b|monthly\b|p\.a\.|每年|每月|一年)",
    re.IGNORECASE,
)
_YEARLY_BEFORE = re.compile(
    r"(?:每年|年费|年度|年付|annual|yearly|ARR)\s*(?:费用|价格|报价)?\s*(?:为|是|:|：)?\s*$", re.I
)
_MONTHLY_BEFORE = re.compile(r"(?:每月|月费|monthly|MRR)\s*(?:费用|价格)?\s*(?:为|是|:|：)?\s*$", re.I)
PERCENT = re.compile(r"(?P<num>\d+(?:\.\d+)?)\s?(?:%|％|percent\b)", re.IGNORECASE)
# "30 years old" and "30岁" say what "Alice is 30" does: an age is its bare number.
_AGE_AFTER = re.compile(r"\s*old\b", re.IGNORECASE)
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip


def zh_number(text: str) -> int | None:
    """三 → 3, 十 → 10, 二十五 → 25, 三十 → 30; None for what is not one number, such as the
    ranges that adjacent digits say (一两天 "a day or two", 两三万 "20–30 thousand", 三四十)."""
    try:
        if "十" in text:
            tens, _, ones = text.partition("十")
            if len(tens) > 1 or len(ones) > 1:
                return None
            return (_ZH_DIGIT[tens] if tens else 1) * 10 + (_ZH_DIGIT[ones] if ones else 0)
        return _ZH_DIGIT[text] if len(text) == 1 else None
    except KeyError:
        return None


def number_value(num: str, exponent: int = 0) -> Decimal | None:
    """A number as written ("1,200.5", "1，200", "三") times ten to `exponent`; None when
    it is not one number."""
    if num.isascii() or not any(c in _ZH_DIGIT or c == "十" for c in num):
        try:
            value = Decimal(num.replace(",", "").replace("，", ""))
        except InvalidOperation:
            return None
    else:
        whole = zh_number(num)
        if whole is None:
            return None
        value = Decimal(whole)
    return value.scaleb(exponent)


def spelled(value: Decimal) -> str:
    return format(value.normalize(), "f")


def spelled_number(num: str, magnitude: str = "") -> str:
    """A number written out in digits with its magnitude multiplied in: ("3", "万") →
    "30000", ("三", "万") → "30000", ("3.5", "m") → "3500000"; as written when unreadable."""
    value = number_value(num, MAGNITUDES.get(magnitude.lower(), 0))
    return num if value is None else spelled(value)


@dataclass(frozen=True)
class Quantity:
    """One number read with what says how much it is. `value`: the number spelt in digits,
    magnitude multiplied in; `unit`: one spelling ("usd", "%", "hour", "" for none);
    `currency`: the unit when it is money; `period`: "year" or "month" for money that
    recurs, else ""; `start`, `end`: its span, the period written after it included."""

    value: str
    unit: str
    currency: str
    period: str
    magnitude: str
    start: int
    end: int
    shown: str
    qualified: bool  # said with a currency, a magnitude or a unit (not a bare number)

    @property
    def fact(self) -> str:
        """One spelling: "30000·cny", "2500000·cny/year", "3·pm", a bare "30"."""
        if not self.unit:
            return self.value
        return f"{self.value}·{self.unit}" + (f"/{self.period}" if self.period else "")


def _period(text: str, start: int, end: int) -> tuple[str, int]:
    """The period an amount of money between `start` and `end` recurs on, and where it ends."""
    after = _PERIOD_AFTER.match(text, end)
    if after:
        word = after.group().strip().lower()
        return ("month" if "mo" in word or "月" in word else "year"), after.end()
    before = text[max(0, start - 12) : start]
    if _YEARLY_BEFORE.search(before):
        return "year", end
    if _MONTHLY_BEFORE.search(before):
        return "month", end
    return "", end


def _quantity(match: re.Match, text: str) -> Quantity:
    pre, num, mag, unit = (g.lower() if g else "" for g in match.group("pre", "num", "mag", "unit"))
    unit = UNITS[unit] if unit else CURRENCIES.get(pre, "")
    if unit == "岁" or (unit == "year" and _AGE_AFTER.match(text, match.end())):
        unit = ""
    if unit == "折" and len(num) == 2 and num[0] in _ZH_DIGIT and num[1] in _ZH_DIGIT:
        num = f"{_ZH_DIGIT[num[0]]}.{_ZH_DIGIT[num[1]]}"  # 八五折 is 8.5折 (15% off)
    currency = unit if unit in CURRENCIES.values() else ""
    period, end = _period(text, match.start(), match.end()) if currency else ("", match.end())
    start = match.start() + len(match.group()) - len(match.group().lstrip())
    return Quantity(
        value=spelled_number(num, mag),
        unit=unit,
        currency=currency,
        period=period,
        magnitude=mag,
        start=start,
        end=end,
        shown=text[start:end].strip(),
        qualified=bool(pre or mag or match.group("unit")),
    )


def quantities(text: str) -> list[Quantity]:
    """Every number of `text` with what says how much it is, in order."""
    return [_quantity(match, text) for match in NUMBER_WITH_UNIT.finditer(text)]


def _inside_word(text: str, quantity: Quantity) -> bool:
    """A number glued to a letter before it ("Q3", "v2", "MA5F") is part of a name or id."""
    return quantity.start > 0 and text[quantity.start - 1].isascii() and text[quantity.start - 1].isalpha()


def amounts(text: str) -> list[Quantity]:
    """The amounts `text` states: numbers with a currency or a magnitude ("$1.2 billion per
    year", "3千万元", "80k"), not a number inside an id or a date's name ("Q3 2027")."""
    found = []
    for quantity in quantities(text):
        if not (quantity.currency or quantity.magnitude) or _inside_word(text, quantity):
            continue
        if number_value(quantity.value) is None:
            continue
        found.append(quantity)
    return found


def mentions(text: str) -> int:
    """How many amounts and percentages `text` states (what makes a sentence telling)."""
    return len(amounts(text)) + len(PERCENT.findall(text))
