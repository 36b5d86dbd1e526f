"""The date parser (skills.builtin.dates.find_date), shared by the skill and the memories app."""

from datetime import date

import pytest

from memories.services.dates import parse_occurred
from skills.builtin.dates import find_date

SESSION = date(2026, 3, 20)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-03-05上线了Apollo", date(2024, 3, 5)),
        ("2024.3.5签约", date(2024, 3, 5)),
        ("2024/3/5签约", date(2024, 3, 5)),
        ("版本2024.3.5.1发布", None),
        ("去年3月5日我们和Acme签约", date(2025, 3, 5)),
        ("前年3月5日", date(2024, 3, 5)),
        ("今年12月1日上线", date(2026, 12, 1)),
        ("明年1月2日", date(2027, 1, 2)),
        ("三月五日开会", date(2026, 3, 5)),
        ("二〇二四年三月五日签约", date(2024, 3, 5)),
        ("二零二四年十二月二十五日", date(2024, 12, 25)),
        ("十一月三十日的年会", date(2025, 11, 30)),
        ("3月三十一日", date(2026, 3, 31)),
        ("13月5日", None),
        ("上周五开会", date(2026, 3, 13)),
        ("下周一开会", date(2026, 3, 23)),
        ("周五天气很好", date(2026, 3, 20)),
        ("昨天天气很好", date(2026, 3, 19)),
        ("三天前", date(2026, 3, 17)),
        ("I met them last Friday", date(2026, 3, 13)),
        ("We signed on March 12", date(2026, 3, 12)),
        ("We like Postgres", None),
    ],
)
def test_find_date(text, expected):
    assert find_date(text, SESSION) == expected


@pytest.mark.parametrize(
    "text",
    [
        "我一周三次健身",
        "每周一开例会",
        "每个周一开会",
        "一周三天在家办公",
        "两周一次复盘",
        "每年3月5日体检",
        "We meet every Monday",
        "We deploy on Tuesdays",
        "每天早上跑步",
    ],
)
def test_a_routine_has_no_date(text):
    assert find_date(text, SESSION) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A month-day without a year that is more than a month after the session: last year's.
        ("12月1日我们和Acme开会", date(2025, 12, 1)),
        ("We met Acme on December 1", date(2025, 12, 1)),
        # Within a month after the session: this year's (something just ahead).
        ("4月10日上线", date(2026, 4, 10)),
        # The sentence says future: this year's, and a date long past is next year's.
        ("我们计划12月1日上线", date(2026, 12, 1)),
        ("We will launch on December 1", date(2026, 12, 1)),
        ("We will launch on January 5", date(2027, 1, 5)),
    ],
)
def test_a_month_day_without_a_year(text, expected):
    assert find_date(text, SESSION) == expected
    assert parse_occurred(text, SESSION) == expected  # the memories app agrees


def test_periods_are_dated_only_when_asked():
    assert find_date("Our budget this year is 2M", SESSION) is None
    assert find_date("We shipped it last month", SESSION, periods=True) == date(2026, 2, 20)
    assert parse_occurred("We shipped it last month", SESSION) == date(2026, 2, 20)
