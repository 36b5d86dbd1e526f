"""The date parser (almanac.text.dates.find_date), shared by the skill and the memories app:
Chinese and English forms, plans dated in the future and reports in the past, numeric d/m/y
and m/d/y dates when only one reading is one."""

from datetime import date

import pytest

from almanac.text.dates import find_date
from memories.services.dates import parse_occurred

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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'll call Acme on May 2", date(2026, 5, 2)),
        ("I’ll call Acme on May 2", date(2026, 5, 2)),
        ("We shall sign on May 2", date(2026, 5, 2)),
        ("We're launching on May 2", date(2026, 5, 2)),
        ("We are launching the beta on May 2", date(2026, 5, 2)),
        ("我们会在5月2日上线", date(2026, 5, 2)),
        ("要在6月1日交付", date(2026, 6, 1)),
        ("我们将要在6月1日交付", date(2026, 6, 1)),
        ("我们会上线于5月2日", date(2026, 5, 2)),
    ],
)
def test_a_plan_is_dated_in_the_future(text, expected):
    assert find_date(text, SESSION) == expected
    assert parse_occurred(text, SESSION) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I called Acme on May 2",
        "5月2日的会议上我们决定了预算",
        "5月2日开会讨论了预算",
        "客户在5月2日提出了要求",
        "这很重要，5月2日签了合同",
        "The review on May 2 was nothing special",
        "John's meeting on May 2 went well",
        "董事会在5月2日批准了预算",
        "5月2日董事会批准了预算",
        "5月2日的发布会很成功",
        "5月2日我参加了研讨会",
        "5月2日开了个会",
        "5月2日买了需要的服务器",
        "5月2日她要了一份合同",
        "5月2日买到了想要的东西",
        "The invoice from May 2 is outstanding",
        "The receipt from May 2 is missing",
        "The report from May 2 is interesting",
    ],
)
def test_a_report_stays_in_the_past(text):
    assert find_date(text, SESSION) == date(2025, 5, 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Signed on 13/05/2026", date(2026, 5, 13)),
        ("Signed on 05/13/2026", date(2026, 5, 13)),
        ("Signed on 05/05/2026", date(2026, 5, 5)),
        ("Signed on 03/05/2026", None),  # 3 May or March 5: ambiguous
        ("Signed on 31/31/2026", None),
    ],
)
def test_slash_dates_when_only_one_reading_is_a_date(text, expected):
    assert find_date(text, SESSION) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我周五要去上海出差", date(2026, 3, 20)),  # SESSION is a Friday: today
        ("周六我们将发布新版本", date(2026, 3, 21)),
        ("We will launch on Monday.", date(2026, 3, 23)),
        ("周四和Acme开会了", date(2026, 3, 19)),  # a report: the last one
        ("I met Acme on Monday.", date(2026, 3, 16)),
        ("大后天我们和Acme开会", date(2026, 3, 23)),
        ("大前天我们和Acme开会了", date(2026, 3, 17)),
        ("后天开会", date(2026, 3, 22)),
        ("My flight is on May 3.", date(2026, 5, 3)),  # stated in the present: to come
        ("The renewal is due 1 June", date(2026, 6, 1)),
        ("The meeting was on May 3.", date(2025, 5, 3)),
    ],
)
def test_weekdays_and_days_around_today(text, expected):
    assert find_date(text, SESSION) == expected


@pytest.mark.parametrize(
    "text",
    [
        "我以前天天加班",  # 以前 + 天天: "used to, every day", not 前天
        "他之前天津出差过",  # 之前 + 天津
        "最后天气很好",  # 最后 + 天气, not 后天
        "午后天色暗了",
    ],
)
def test_a_day_word_inside_another_word_is_no_date(text):
    assert find_date(text, SESSION) is None
    assert parse_occurred(text, SESSION) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a date stated or set is one to come, unless its clause reports the past
        ("我的航班是5月3日", date(2026, 5, 3)),
        ("会议定在5月3日，大家都同意了", date(2026, 5, 3)),
        ("评审推迟到5月3日", date(2026, 5, 3)),
        ("合同是5月3日签的", date(2025, 5, 3)),  # 是…的: a report
        ("是5月3日开过会", date(2025, 5, 3)),
        ("5月3日的会议讨论了预算", date(2025, 5, 3)),
        # a two-digit year
        ("25年5月3日我们和华为签约", date(2025, 5, 3)),
        ("24年3月5日开了会", date(2024, 3, 5)),
        ("我工作了25年，3月5日退休", date(2026, 3, 5)),  # a count of years, not one
        ("我99年5月3日入职", date(1999, 5, 3)),
        ("合同40年5月3日到期", date(2040, 5, 3)),  # the nearest century
        # offsets from the day it was said, and days of a named month
        ("三天前和华为开会", date(2026, 3, 17)),
        ("两天后交付", date(2026, 3, 22)),
        ("两周后上线", date(2026, 4, 3)),
        ("一个月后续约", date(2026, 4, 20)),
        ("3个月前签的合同", date(2025, 12, 20)),
        ("下个月10号交付", date(2026, 4, 10)),
        ("本月15日开会", date(2026, 3, 15)),
        ("上个月5号签约", date(2026, 2, 5)),
        ("3月前提交", None),  # before March, no day
        ("10号楼开会", None),  # building 10
    ],
)
def test_chinese_dates_said_in_more_ways(text, expected):
    assert find_date(text, SESSION) == expected
