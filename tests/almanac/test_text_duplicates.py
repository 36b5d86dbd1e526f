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
