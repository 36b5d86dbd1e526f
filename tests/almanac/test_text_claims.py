"""What a memory states a value of (almanac.text.claims.claim): bare amounts, "now",
corrections and changes from one value to another, zh and en; and what states none."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from almanac.text import claims
from almanac.text.claims import claim
from almanac.text.stated import holds_value, same_thing, same_value


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The Apollo budget is 50k.", "The Apollo budget is now 80k."),
        ("Apollo budget 80k", "The Apollo budget is 120k"),
        ("The Apollo budget is 50k", "The Apollo budget went from 50k to 80k."),
        ("The Vercel budget is 30k", "The Vercel budget is not 30k, it's 50k"),
        ("The Globex deal is $1 billion.", "The Globex deal is not $1 billion, it's $1.2 billion."),
        ("Apollo预算是200万", "Apollo预算改为250万"),
        ("Apollo预算是200万", "Apollo预算不是200万，是250万"),
        ("Apollo预算是200万", "Apollo预算从200万调整为250万"),
        ("Apollo预算是200万元", "Apollo预算由200万元上调至250万元"),
        ("客户C合同金额30万元", "客户C合同金额调整为50万元"),
        ("The Apollo launch is on March 12", "The Apollo launch moved from March 12 to March 19"),
    ],
)
def test_a_new_value_of_the_same_thing(older, newer):
    old, new = claim(older), claim(newer)
    assert old is not None and new is not None, (old, new)
    assert same_thing(old, new) and not same_value(old.value, new.value)


@pytest.mark.parametrize(
    ("older", "correction"),
    [("The Vercel budget is 30k", "Not 30k, it's 50k"), ("客户C合同金额是200万", "不是200万，是250万")],
)
def test_a_correction_without_a_subject_names_the_value_it_corrects(older, correction):
    old, new = claim(older), claim(correction)
    assert new.key == "" and new.correction
    assert holds_value(old.value, new.old) and not holds_value(old.value, new.value)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The Apollo budget is 50k", "The Hermes budget is 80k"),
        ("Apollo预算是200万", "Hermes预算是250万"),
        ("Apollo budget 80k", "Apollo headcount budget 80k people"),
    ],
)
def test_another_subject_is_another_thing(first, second):
    a, b = claim(first), claim(second)
    assert a is not None and b is not None and not same_thing(a, b)


@pytest.mark.parametrize(
    "text",
    [
        "Apollo has 12 engineers",  # a number without a unit or magnitude
        "Apollo有12名工程师",
        "review number 3",
        "The team moved from Building A to Building B",  # a change of words, not of values
    ],
)
def test_no_value_no_claim(text):
    assert claim(text) is None


def test_the_same_amount_with_and_without_its_unit_is_one_value():
    assert same_value(claim("The Apollo budget is 50k").value, claim("The Apollo budget is 50k USD").value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The owner of the Apollo budget is now Bob", {"bob"}),
        ("Apollo's owner is now Bob", {"bob"}),
        ("Apollo负责人现在是李四", {"李四"}),
    ],
)
def test_now_is_no_part_of_an_owner(text, value):
    found = claim(text)
    assert found.attribute == "owner" and found.value == frozenset(value)


_KEY_WORDS = [
    "expense",
    "reports",
    "billing",
    "Apollo",
    "budget",
    "owner",
    "status",
    "rule",
    "合同",
    "金额",
    "客户C",
    "负责人",
]


@given(st.lists(st.sampled_from(_KEY_WORDS), min_size=1, max_size=4), st.sampled_from([" ", "."]))
@settings(max_examples=200, deadline=None)
def test_a_normalized_key_normalizes_to_itself(words, joiner):
    # A stored key meets the key an extractor passes again: normalizing must be idempotent,
    # also for English stems that stemming would cut again ("expens" → "expen").
    key = claims.key_normalize(joiner.join(words))
    assert claims.key_normalize(key) == key


def test_a_key_stored_before_its_stems_were_settled_meets_the_key_read_now():
    # What migration memories 0003 does to stored keys, and what a stored key passed again gets.
    assert claims.key_settle("expens report ·rule") == claims.key_normalize("Expense reports.rule")
    assert claims.key_normalize("expens report ·rule") == "expen report ·rule"
    assert claims.key_settle("c 合同 客户 金额") == "c 合同 客户 金额"
