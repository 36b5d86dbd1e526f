"""almanac.text.durations: periods in English and Chinese, never a date's numbers."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from almanac.text.durations import durations, term_end


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("for an initial term of twelve (12) months", ["12 months"]),
        ("at least sixty (60) days' written notice", ["60 days"]),
        ("payment terms: net 30", ["30 days"]),
        ("renews for successive one-year periods", ["1 year"]),
        ("within 10 business days of invoice", ["10 business days"]),
        ("合同期限为两年", ["2 years"]),
        ("收到发票后三十日内付款", ["30 days"]),
        ("期限十二个月", ["12 months"]),
        ("十五个工作日内", ["15 business days"]),
        ("提前30天书面通知", ["30 days"]),
    ],
)
def test_a_stated_period_is_read(text, spelled):
    assert [d.spelled for d in durations(text)] == spelled


@pytest.mark.parametrize(
    "text",
    ["自2026年1月1日起", "于3月1日生效", "每月5日前支付", "2026年度预算", "三月一日", "signed on 2026-03-01"],
)
def test_the_numbers_of_a_date_are_no_period(text):
    assert durations(text) == []


def test_a_term_ends_the_day_before_its_anniversary():
    assert term_end(dt.date(2026, 1, 1), durations("one year")[0]) == dt.date(2026, 12, 31)
    assert term_end(dt.date(2026, 3, 1), durations("12个月")[0]) == dt.date(2027, 2, 28)


def test_business_days_skip_the_weekend():
    friday = dt.date(2026, 3, 6)
    assert durations("3 business days")[0].shift(friday) == dt.date(2026, 3, 11)
    assert durations("3个工作日")[0].shift(dt.date(2026, 3, 11), -1) == friday


@given(st.integers(min_value=1, max_value=365), st.sampled_from(["days", "天", "日"]))
def test_any_count_of_days_reads_back(count, unit):
    text = f"within {count} {unit}" if unit == "days" else f"在{count}{unit}内"
    assert [(d.count, d.unit) for d in durations(text)] == [(count, "day")]
