"""`almanac.text.facts`: the facts that tell two close sentences apart (`fact_signature`), and
whether a summary still says what an original said (`summary_holds`). No database."""

import pytest

from almanac.text.duplicates import same_facts
from almanac.text.facts import codes, fact_signature
from almanac.text.summaries import summary_holds, summary_terms

HELD = [
    ("Alice does not eat pork", "Alice eats pork."),
    ("Alice eats pork", "Alice does not eat pork."),
    ("我不喜欢喝绿茶", "我喜欢喝绿茶。"),
    ("Alice is allergic to peanuts, shellfish and sesame", "Alice is allergic to peanuts."),
    (
        "Carol prefers aisle seats on long flights, vegetarian meals and extra water bottles",
        "prefers aisle seats on long flights, vegetarian meals and extra water bottles.",
    ),
]


@pytest.mark.parametrize(("original", "summary"), HELD)
def test_a_lossy_or_inverted_summary_does_not_hold(original, summary):
    assert not summary_holds(original, summary_terms(summary))
    assert summary_holds(original, summary_terms(f"{original}."))  # quoted, it does


def test_a_summary_quoting_other_items_holds_each_as_it_was_said():
    items = ["Alice does not eat pork.", "Bob eats pork on Fridays.", "Alice eats beef but not lamb."]
    terms = summary_terms("\n".join(items))
    assert all(summary_holds(item, terms) for item in items)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The Acme budget is $3M", "The Acme budget is $3 million"),
        ("the call is at 3pm", "the call is at 3 pm"),
        ("the server has 16GB of RAM", "the server has 16 GB of RAM"),
        ("合同金额是3万元", "合同金额是三万元"),
        ("合同金额是3万元", "合同金额是30000元"),
        ("预算是十万元", "预算是10万元"),
        ("Alice is 30", "Alice is 30 years old"),
        ("他今年30岁", "他今年30"),
        ("他今年二十五岁", "他今年25岁"),
        ("budget of 30,000 USD", "budget of 30k USD"),
    ],
)
def test_restatements_share_a_fact_signature(a, b):
    assert fact_signature(a) == fact_signature(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("合同金额是3万元", "合同金额是3千元"),
        ("预算是十万元", "预算是一万元"),
        ("worth 3 million USD", "worth 3 billion USD"),
        ("The Acme budget is $3M", "The Acme budget is €3M"),
        ("the call is at 3pm", "the call is at 3am"),
        ("Alice is 30 years old", "Alice has worked here for 30 years"),
        ("the server has 16GB of RAM", "the server has 16TB of RAM"),
        # adjacent Chinese digits are a range, not a number read digit by digit
        ("上线还要一两天", "上线还要12天"),
        ("预算两三万元", "预算23万元"),
        ("项目需要三四个人", "项目需要34个人"),
        ("孩子五六岁", "孩子56岁"),
        ("出差七八天", "出差78天"),
        ("团队有三四十人", "团队有34人"),
    ],
)
def test_other_amounts_keep_their_signatures_apart(a, b):
    assert fact_signature(a) != fact_signature(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("合同金额是3万元", "合同金额是3千元"),
        ("worth 3 million USD", "worth 3 billion USD"),
        ("3 thousand dollars", "3 million dollars"),
        ("the call is at 3 pm", "the call is at 3 am"),
        ("budget $30", "budget €30"),
        ("grew 50%", "grew 50 points"),
        ("the trial lasts 3 days", "the trial lasts 3 weeks"),
        ("合同3月5日签", "合同5月3日签"),
    ],
)
def test_fact_signature_keeps_units_apart(a, b):
    assert fact_signature(a) != fact_signature(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("$3 million", "3 million dollars"), ("grew 50%", "grew 50 percent"), ("30k budget", "30K budget")],
)
def test_fact_signature_unit_synonyms_agree(a, b):
    assert fact_signature(a) == fact_signature(b)


@pytest.mark.parametrize(
    "first, second",
    [
        ("The Acme price is ten thousand dollars", "The Acme price is $10,000"),
        ("We sign with Acme on the twenty-first of March", "We sign with Acme on the 21st of March"),
        ("Acme 打八五折", "Acme 打8.5折"),
        ("Acme 这周五发布", "Acme 本周五发布"),
    ],
)
def test_numbers_in_words_and_digits_are_one_fact(first, second):
    assert fact_signature(first) == fact_signature(second)


@pytest.mark.parametrize(
    "first, second",
    [
        ("以前年轻时常去 Acme 出差", "年轻时常去 Acme 出差"),  # 以前 + 年轻, no 前年 in it
        ("过去年份的 Acme 合同都已归档", "Acme 合同都已归档"),  # 过去 + 年份, no 去年
    ],
)
def test_a_relative_date_inside_another_word_is_no_fact(first, second):
    assert fact_signature(first)[0] == fact_signature(second)[0]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Client 15 note 142 agreed for week 9.", "For week 9, client 15 note 142 agreed."),
        ("The Acme budget is $3M", "The Acme budget is $3 million"),
        ("invoice 1,200 paid", "invoice 1200 paid"),
        ("客户15的备注142：第9周同意", "客戶１５的備註１４２：第９週同意"),
        ("travel item ldecjucdkbr agreed", "Travel item ldecjucdkbr agreed."),
    ],
)
def test_restatements_are_the_same_facts(a, b):
    assert same_facts(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Client 15 note 142 agreed for week 9.", "Client 9 note 142 agreed for week 15."),
        ("travel item ldecjucdkbr agreed", "travel item ldqkfdcbekq agreed"),
        ("Alice approved the travel item", "Bob approved the travel item"),
        ("客户15的备注142：第9周同意", "客户9的备注142：第15周同意"),
    ],
)
def test_other_roles_codes_or_names_are_other_facts(a, b):
    assert not same_facts(a, b)


def test_a_lowercase_code_is_a_fact_and_an_english_word_is_not():
    assert codes("item ldecjucdkbr and xkcdq agreed for the travel") == {"ldecjucdkbr", "xkcdq"}


def test_counts_and_durations_are_statements():
    from almanac.text.statements import statements

    (count,) = [s for s in statements("Vega 750 seats at $102 per seat.") if s.attribute.startswith("count:")]
    assert count.attribute == "count:seat" and count.shown == "750 seats"
    (zh,) = [s for s in statements("按照沟通：Vega 610个席位。") if s.attribute.startswith("count:")]
    assert zh.attribute == "count:席位" and zh.shown == "610个席位"
    (pilot,) = statements("The pilot runs 119 days.")
    assert pilot.attribute.startswith("duration:") and pilot.shown == "119 days"
    assert not [s for s in statements("Q4 numbers, 3 times") if s.attribute.startswith("count:")]


def test_open_items_of_any_kind():
    from almanac.text.open_items import is_open_item

    for text in ["Open risk for Globex: SSO breaks.", "One open point on our side", "Still open.",
                 "华源物流 的未决风险：VPN 断开", "我们这边还有一个未解决的问题", "待解决问题"]:  # fmt: skip
        assert is_open_item(text), text
    assert not is_open_item("We opened the office in May.")


def test_a_price_per_seat_a_total_and_a_renewal_are_other_things():
    from almanac.text.statements import statements

    def key(text):
        (found,) = [s for s in statements(text) if s.attribute.startswith("amount:")]
        return found.attribute

    quote, total = key("750 seats of Vega at $102/seat."), key("Total for the first year: $678,060.")
    renewal = key("For the renewal we propose $150/seat.")
    assert len({quote, total, renewal}) == 3
    assert key("For a two-year term we can offer $96/seat.") == quote  # a new quote replaces it
    # A sentence about the renewal says so once, its amounts are the renewal's.
    assert key("Acme pushed back on the renewal, we are now at $131/seat.") == renewal
    zh_quote, zh_renewal = key("报价每席位728元（每年）。"), key("续约价最终定为每席位1009元。")
    assert zh_quote != zh_renewal and key("签两年的话可以给到每席位669元。") == zh_quote
    assert key("订单首年总价：678,060元。") != zh_quote
    # A period is not a unit: "$195k/yr" and "$172,000 per year" are one price.
    assert key("Globex quote: $195k/yr") == key("Globex agreed to $172,000 per year")
