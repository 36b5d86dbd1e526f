"""The one "same fact?" rule (almanac.text.stated): one representation of a stated value for
the wiki's page statements and the memories' claims, one "same thing?" and one "same value?",
zh and en."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from almanac.text.claims import claim
from almanac.text.stated import Stated, holds_value, same_thing, same_value
from almanac.text.statements import statements

AMOUNTS = ["30万元", "$30k", "¥250万/年", "$1.2 billion per year", "3千万元", "80k USD", "三万元", "$195k/yr"]


def test_a_memory_claim_is_a_value_of_its_subject_and_attribute():
    found = claim("Apollo的负责人是张三")
    assert (found.subject, found.attribute) == ("apollo", "owner") and found.key == "apollo ·owner"
    found = claim("客户C合同金额30万元")
    assert found.attribute == "" and found.key == found.subject == "c 合同 客户 金额"
    assert found.value == frozenset({"300000·cny"})


def test_a_page_statement_is_a_value_of_an_attribute_of_the_page():
    (found,) = statements("Globex agreed to $172,000 per year")
    assert found.subject == "" and found.key == "amount:usd/year:price"
    assert found.value == frozenset({"172000·usd/year"}) and found.shown == "$172,000 per year"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Globex quote: $195k/yr", "Globex agreed to $172,000 per year"),
        ("华为报价为每年30万元", "华为同意每年28万元"),
        ("Owner: Maria Lopez", "account manager is now Dana Smith"),
        ("合同期限三年", "contract term is 2 years"),
    ],
)
def test_two_values_of_one_thing_on_a_page(first, second):
    (a,), (b,) = statements(first)[:1], statements(second)[:1]
    assert same_thing(a, b) and not same_value(a.value, b.value)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Price is $100k/yr", "Price is $100,000 per year"),
        ("价格是每年250万元", "价格¥250万/年"),
        ("discount 12%", "折扣 12 percent"),
    ],
)
def test_restatements_on_a_page_say_the_same_value(first, second):
    (a,), (b,) = statements(first)[:1], statements(second)[:1]
    assert same_thing(a, b) and same_value(a.value, b.value)


def test_a_floor_is_not_the_price_and_a_one_off_is_not_a_yearly_fee():
    price, floor, once = (statements(s)[0] for s in ("$195k/yr", "price floor is $160k/yr", "$195k"))
    assert not same_thing(price, floor) and not same_thing(price, once)


def test_a_stored_key_names_the_same_thing_as_the_claim_it_came_from():
    for text in ("Apollo的负责人是张三", "客户C合同金额30万元", "I prefer window seats on flights"):
        found = claim(text)
        again = Stated.of_key(found.key, found.value)
        assert again.key == found.key and same_thing(again, found)


def test_a_correction_names_an_amount_without_its_unit():
    assert same_value(frozenset({"500000"}), frozenset({"500000·cny"}))
    assert not same_value(frozenset({"500000·usd"}), frozenset({"500000·cny"}))
    assert holds_value(frozenset({"300000·cny"}), frozenset({"300000"}))
    assert not holds_value(frozenset({"300000·cny"}), frozenset())


@settings(max_examples=60)
@given(st.sampled_from(AMOUNTS), st.sampled_from(AMOUNTS))
def test_same_value_is_symmetric_and_agrees_between_readers(first, second):
    a, b = claim(f"服务费是{first}"), claim(f"服务费是{second}")
    assert same_thing(a, b) and same_value(a.value, b.value) == same_value(b.value, a.value)
    x, y = statements(f"服务费是{first}"), statements(f"服务费是{second}")
    if x and y and same_thing(x[0], y[0]):
        # Where both readers read one amount, they say the same about its value.
        assert same_value(x[0].value, y[0].value) == same_value(a.value, b.value)


@pytest.mark.parametrize(
    ("sentence", "decides"),
    [
        ("决定：采用方案B。", True),
        ("We decided to go with Jira.", True),
        ("## 决定", False),  # a note's heading names where the decisions are
        ("## Decision", False),
        ("Decision:", False),
        ("同意。", False),
    ],
)
def test_a_decision_says_what_was_decided(sentence, decides):
    assert any(s.key.startswith("decision:") for s in statements(sentence)) is decides
