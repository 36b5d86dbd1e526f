"""The near-duplicate test (almanac.text.duplicates) with the "same fact?" rule it uses
(almanac.text.stated, claims read by almanac.text.claims), zh and en."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from almanac.text.claims import claim
from almanac.text.duplicates import says_the_same
from almanac.text.stated import same_value

SUBJECTS = ["客户C合同金额", "The Vercel renewal budget", "Apollo的预算", "The Globex price", "服务费"]
VERBS = ["是", " is ", "为", " is now ", "调整为"]
AMOUNTS = ["30万元", "$30k", "¥250万/年", "$1.2 billion per year", "3千万元", "80k USD", "三万元", "$195k/yr"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("客户C合同金额30万元", "客户C合同金额是300,000元"),
        ("The Vercel budget is $3M", "The Vercel budget is $3 million"),
        ("服务费¥250万/年", "服务费2,500,000元/年"),
        ("Globex pays $1.2 billion per year", "Globex pays $1,200 million per year"),
    ],
)
def test_restatements_are_duplicates(first, second):
    assert says_the_same(first, second) and says_the_same(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("客户C合同金额30万元", "客户C合同金额调整为50万元"),
        ("服务费¥250万/年", "服务费¥250万"),  # a year's fee is not a one-off
        ("The Vercel budget is $3M", "The Vercel budget is $3 billion"),
        ("I prefer window seats on flights", "I prefer aisle seats on flights"),
    ],
)
def test_another_value_is_no_duplicate(first, second):
    assert not says_the_same(first, second)


def test_the_same_thing_with_another_amount_has_one_key_and_two_values():
    old, new = claim("服务费每年250万元"), claim("服务费调整为每年300万元")
    assert old.key == new.key and not same_value(old.value, new.value)


sentences = st.builds(
    lambda s, v, a: f"{s}{v}{a}", st.sampled_from(SUBJECTS), st.sampled_from(VERBS), st.sampled_from(AMOUNTS)
)


@settings(max_examples=60)
@given(sentences)
def test_a_text_is_a_duplicate_of_itself(text):
    assert says_the_same(text, text)


@settings(max_examples=60)
@given(sentences, sentences)
def test_same_fact_is_symmetric(first, second):
    assert says_the_same(first, second) == says_the_same(second, first)
    a, b = claim(first), claim(second)
    if a is not None and b is not None:
        assert same_value(a.value, b.value) == same_value(b.value, a.value)


@settings(max_examples=60)
@given(st.sampled_from(SUBJECTS), st.sampled_from(AMOUNTS), st.sampled_from(AMOUNTS))
def test_one_subject_keeps_one_key_whatever_its_amount(subject, first, second):
    a, b = claim(f"{subject}是{first}"), claim(f"{subject}是{second}")
    assert a is not None and b is not None and a.key == b.key


# One-detail pairs: each frame says one fact in two phrasings (a restatement of each other)
# with a slot for the detail: a period, a relation (before / after, from / to, more / less,
# 以上 / 以下, 多于 / 少于) or a content word. Another detail is another fact; the same
# detail said otherwise (the other phrasing, case, punctuation, filler) is the same.
FRAMES = {
    "en": [
        (("The API rate limit is 1200 requests per {}", "API rate limit: 1,200 requests per {}"),
         ["minute", "hour", "day", "second"]),
        (("The backup runs {} midnight", "Backups run {} midnight"), ["before", "after"]),
        (("The shuttle leaves {} the airport at 9 am", "the shuttle leaves {} the airport at 9am"), ["from", "to"]),
        (("Orders of {} than 50k need approval", "Orders of {} than 50,000 need approval"), ["more", "less"]),
        (("The {} team owns the release checklist", "the {} team owns the release checklist"),
         ["platform", "mobile", "data", "billing"]),
        (("Alice likes the {} dashboard", "Alice prefers the {} dashboard"), ["new", "old", "sales"]),
    ],
    "zh": [
        (("API限流是每{}1200次请求", "API限流为每{}1,200次请求"), ["分钟", "小时", "天", "秒"]),
        (("备份在午夜{}运行", "备份于午夜{}运行"), ["之前", "之后"]),
        (("订单金额{}5万需要审批", "订单金额{}五万需要审批"), ["多于", "少于", "高于", "低于"]),
        (("订单金额5万{}需要审批", "订单金额在5万{}的需要审批"), ["以上", "以下"]),
        (("班车早上9点{}机场出发", "班车早上九点{}机场出发"), ["从", "往"]),
        (("{}负责发布清单", "{}负责发布清单。"), ["平台组", "移动组", "数据组"]),
    ],
}  # fmt: skip
DECORATIONS = {
    "en": (["", "Thanks! ", "FYI, ", "Reminder: ", "Ok, "], ["", ".", "!", ", thanks."]),
    "zh": (["", "好的，", "提醒一下：", "对了，"], ["", "。", "哦", "！"]),
}


@st.composite
def one_fact(draw, lang: str, phrasing: str, detail: str) -> str:
    opener, ending = (draw(st.sampled_from(options)) for options in DECORATIONS[lang])
    text = phrasing.format(detail)
    if lang == "en" and draw(st.booleans()):
        text = text.lower()
    return opener + text + ending


@st.composite
def two_facts(draw, same: bool) -> tuple[str, str]:
    lang = draw(st.sampled_from(sorted(FRAMES)))
    phrasings, details = draw(st.sampled_from(FRAMES[lang]))
    first = draw(st.sampled_from(details))
    second = first if same else draw(st.sampled_from(details).filter(lambda d: d != first))
    return (
        draw(one_fact(lang, draw(st.sampled_from(phrasings)), first)),
        draw(one_fact(lang, draw(st.sampled_from(phrasings)), second)),
    )


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(two_facts(same=False))
def test_one_detail_apart_is_never_a_duplicate(pair):
    first, second = pair
    assert not says_the_same(first, second) and not says_the_same(second, first)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(two_facts(same=True))
def test_the_same_fact_said_otherwise_is_a_duplicate(pair):
    first, second = pair
    assert says_the_same(first, second) and says_the_same(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The API rate limit is 1200 requests per minute", "The API rate limit is 1200 requests per hour"),
        ("The backup runs before midnight", "The backup runs after midnight"),
        ("Apollo uses Postgres", "Apollo likes Postgres"),  # a word one side alone says
        ("The report goes to finance", "The report comes from finance"),
    ],
)
def test_a_word_only_one_says_keeps_two_facts_apart(first, second):
    assert not says_the_same(first, second) and not says_the_same(second, first)
