"""The one amount reader (almanac.text.amounts), zh and en: value, currency, magnitude and
period, whatever the spelling; a quarter ("Q3 2027") is a date, never an amount."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from almanac.text.amounts import amounts, quantities
from almanac.text.dates import find_quarter
from almanac.text.facts import fact_signature


def _read(text):
    found = amounts(text)
    assert len(found) == 1, found
    return Decimal(found[0].value), found[0].currency, found[0].period or "once"


@pytest.mark.parametrize(
    ("text", "value", "currency", "period"),
    [
        ("$1.2 billion per year", 1_200_000_000, "usd", "year"),
        ("3千万元", 30_000_000, "cny", "once"),
        ("¥250万/年", 2_500_000, "cny", "year"),
        ("80k", 80_000, "", "once"),
        ("The deal is worth $1.2 billion per year.", 1_200_000_000, "usd", "year"),
        ("合同金额3千万元。", 30_000_000, "cny", "once"),
        ("年费为¥250万", 2_500_000, "cny", "year"),
        ("Globex quote: $195k/yr", 195_000, "usd", "year"),
        ("Globex agreed to $172,000 per year", 172_000, "usd", "year"),
        ("华为同意每年28万元", 280_000, "cny", "year"),
        ("首年费用为¥297，500元", 297_500, "cny", "once"),
        ("预算是三万元", 30_000, "cny", "once"),
        ("budget of 30k USD", 30_000, "usd", "once"),
        ("€3.5M a month", 3_500_000, "eur", "month"),
        ("MRR: $12k", 12_000, "usd", "month"),
        ("两亿美元", 200_000_000, "usd", "once"),
    ],
)
def test_examples(text, value, currency, period):
    assert _read(text) == (Decimal(value), currency, period)


@pytest.mark.parametrize(
    "text",
    ["Q3 2027", "Launch in Q3 2027.", "2027年第三季度上线", "2027 Q3", "version v2.5", "ticket PRD-2024-013"],
)
def test_a_quarter_a_version_or_an_id_is_no_amount(text):
    assert amounts(text) == []


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("Q3 2027", "2027-07-01", "2027-09-30"),
        ("2027年第三季度", "2027-07-01", "2027-09-30"),
        ("q1 of 2026", "2026-01-01", "2026-03-31"),
        ("2025 Q4", "2025-10-01", "2025-12-31"),
    ],
)
def test_a_quarter_is_read_as_its_days(text, first, last):
    start, end = find_quarter(text)
    assert (start.isoformat(), end.isoformat()) == (first, last)


@given(st.integers(1, 4), st.integers(1900, 2999))
def test_any_quarter_is_a_date_and_no_amount(quarter, year):
    for text in (f"Q{quarter} {year}", f"{year}年第{'一二三四'[quarter - 1]}季度", f"{year} Q{quarter}"):
        assert amounts(text) == []
        assert find_quarter(text)[0].month == 3 * quarter - 2


# Spellings of one magnitude and of one currency, before or after the number.
MAGNITUDES = {
    3: ["k", "K", " thousand", "千"],
    4: ["万"],
    6: ["M", "m", " million", "mn", "百万"],
    7: ["千万"],
    8: ["亿"],
    9: [" billion", "bn", "十亿"],
}
CURRENCIES = {
    "usd": (["$", "US$", "USD ", "usd"], [" USD", " dollars", "美元", "美金"]),
    "cny": (["¥", "￥", "RMB ", "CNY "], ["元", " 元", "人民币", "块", " RMB", " yuan"]),
    "eur": (["€", "EUR "], [" EUR", " euros", "欧元"]),
    "gbp": (["£", "GBP "], [" GBP", " pounds", "英镑"]),
}
PERIODS = {
    "year": ["/yr", " per year", "/年", " a year", " annually", "每年"],
    "month": ["/mo", " per month", "/月", " monthly", "每月"],
}


def _grouped(number: int, separator: str) -> str:
    return f"{number:,}".replace(",", separator)


@given(
    number=st.integers(1, 999),
    exponent=st.sampled_from(sorted(MAGNITUDES)),
    currency=st.sampled_from(sorted(CURRENCIES)),
    period=st.sampled_from(["", "year", "month"]),
    data=st.data(),
)
def test_any_spelling_of_an_amount_reads_as_one_value(number, exponent, currency, period, data):
    before, after = CURRENCIES[currency]
    magnitude = data.draw(st.sampled_from(MAGNITUDES[exponent]))
    written = data.draw(
        st.sampled_from(
            [
                f"{number}{magnitude}",
                _grouped(number * 10**exponent, data.draw(st.sampled_from([",", "，", ""]))),
            ]
        )
    )
    if data.draw(st.booleans()):
        text = data.draw(st.sampled_from(before)) + written
    else:
        text = written + data.draw(st.sampled_from(after))
    if period:
        text += data.draw(st.sampled_from(PERIODS[period]))
    sentence = data.draw(
        st.sampled_from(["The price is {}.", "报价为{}。", "{}", "Budget: {}, agreed."])
    ).format(text)
    assert _read(sentence) == (Decimal(number * 10**exponent), currency, period or "once")


@given(st.integers(1, 9), st.sampled_from(["万", "千", "亿"]))
def test_chinese_numerals_and_digits_say_the_same_amount(digit, magnitude):
    numeral = "一二三四五六七八九"[digit - 1]
    assert fact_signature(f"预算{numeral}{magnitude}元")[0] == fact_signature(f"预算{digit}{magnitude}元")[0]


@given(st.integers(1, 10**7), st.sampled_from([("$", "usd"), ("¥", "cny"), ("€", "eur")]))
def test_a_period_is_part_of_the_value(number, sign):
    symbol, code = sign
    once, yearly = quantities(f"{symbol}{number}")[0], quantities(f"{symbol}{number}/yr")[0]
    assert (once.fact, yearly.fact) == (f"{number}·{code}", f"{number}·{code}/year")
