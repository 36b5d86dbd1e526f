"""almanac.text.contracts and .layout: which clause a contract sentence states, the parties
and governing law, and page lines joined back into sentences (zh and en)."""

import pytest

from almanac.text.contracts import clause_types, governing_law, parties, recurring_period
from almanac.text.dates import dates_stated
from almanac.text.layout import unwrap
from skills.builtin.contract_clauses import clauses_offline


@pytest.mark.parametrize(
    ("sentence", "kinds"),
    [
        ("This Agreement commences on March 1, 2026 and continues for an initial term of 12 months.",
         {"start_date", "term"}),
        ("Either party may terminate this Agreement upon thirty days' written notice for material breach.",
         {"termination"}),
        ("The Agreement renews automatically unless notice is given 60 days before the end of the term.",
         {"renewal", "notice", "term"}),
        ("Customer shall pay an annual fee of USD 120,000 within 30 days of invoice.", {"fee", "payment_terms"}),
        ("This Agreement is governed by the laws of the State of New York.", {"governing_law"}),
        ("本合同自双方签字盖章之日起生效，有效期三年。", {"start_date", "term"}),
        ("合同期满前三十日，任何一方可书面通知对方不再续约。", {"renewal", "notice", "term"}),
        ("甲方应于每季度末支付服务费人民币10万元。", {"fee", "payment_terms"}),
        ("本合同适用中华人民共和国法律。", {"governing_law"}),
    ],
)  # fmt: skip
def test_a_sentence_says_which_clauses_it_states(sentence, kinds):
    assert set(clause_types(sentence)) == kinds


@pytest.mark.parametrize(
    ("sentence", "kinds"),
    [
        ("Liability is capped at the fees paid in the last 12 months.", set()),
        ("乙方的赔偿责任上限为甲方在过去12个月内已支付的服务费总额。", set()),
        ("In no event shall either party's aggregate liability exceed USD 1,000,000 per year.", set()),
        ("Supplier shall indemnify Customer against all claims for a period of 24 months after payment.", set()),
        ("The warranty period is 12 months from delivery, and expires upon termination.", set()),
        ("Confidentiality obligations survive termination of this Agreement for three years.", set()),
        ("本合同的保修期为十二个月，自甲方付清全部价款之日起计算。", set()),
        ("保密义务在本合同终止后三年内继续有效。", set()),
        ("任何一方的违约赔偿总额不超过本合同总价的百分之二十。", set()),
        # A clause said first keeps its kind when another clause's word comes later.
        ("Customer shall pay each invoice within 30 days, without set-off for any warranty claim.",
         {"payment_terms"}),
        ("甲方应于收到发票后三十日内付款，逾期付款的应承担赔偿责任。", {"payment_terms"}),
        ("Either party may terminate this Agreement upon 30 days' notice if the other breaches confidentiality.",
         {"termination"}),
    ],
)  # fmt: skip
def test_a_sentence_of_another_clause_states_none_of_these(sentence, kinds):
    """A liability cap, an indemnity, a warranty or confidentiality with a period or an
    amount is not a payment term, a fee, a term or a termination."""
    assert set(clause_types(sentence)) == kinds


def test_a_liability_cap_is_not_read_as_payment_terms():
    for text in (
        "Liability is capped at the fees paid in the last 12 months.",
        "乙方的赔偿责任上限为甲方在过去12个月内已支付的服务费总额。",
    ):
        assert clauses_offline({"pages": [{"page": 1, "text": text}]}) == []


@pytest.mark.parametrize("heading", ["8. Termination", "Fees and Payment", "第八条 合同解除", "第三条 费用"])
def test_a_heading_states_no_clause(heading):
    assert clause_types(heading) == []


def test_governing_law_names_the_jurisdiction():
    assert (
        governing_law("This Agreement shall be governed by the laws of England and Wales.")
        == "England and Wales"
    )
    assert governing_law("The laws of Singapore shall govern this Agreement.") == "Singapore"
    assert governing_law("本合同受中华人民共和国香港特别行政区法律管辖。") == "中华人民共和国香港特别行政区"
    assert governing_law("The parties shall comply with all applicable laws.") is None


def test_parties_from_labels_or_between():
    assert parties("甲方：北京星河科技有限公司\n乙方（服务方）：上海云帆信息技术有限公司\n") == [
        "北京星河科技有限公司",
        "上海云帆信息技术有限公司",
    ]
    text = 'This Agreement is made between Acme Corp. ("Client") and Globex GmbH ("Vendor").'
    assert parties(text) == ["Acme Corp.", "Globex GmbH"]
    assert parties("本合同由北京星河科技有限公司与上海云帆信息技术有限公司签订。") == [
        "北京星河科技有限公司",
        "上海云帆信息技术有限公司",
    ]


def test_a_recurring_amount_says_its_period():
    assert recurring_period("an annual subscription fee of USD 120,000") == "year"
    assert recurring_period("每月服务费人民币2万元") == "month"
    assert recurring_period("a one-time fee of USD 5,000") == ""


def test_whole_dates_in_order_zh_and_en():
    assert [d.isoformat() for _, d in dates_stated("自2026年1月1日起至2027年12月31日止")] == [
        "2026-01-01",
        "2027-12-31",
    ]
    found = dates_stated("effective as of March 1, 2026 and ending on 28 February 2027")
    assert [d.isoformat() for _, d in found] == ["2026-03-01", "2027-02-28"]
    assert dates_stated("on Friday, 3月1日") == []  # no year: nothing to resolve against


def test_wrapped_lines_are_joined_and_headings_kept():
    page = (
        "1. Term\n"
        "This Agreement commences on March 1, 2026 and continues for an initial term of twelve (12)\n"
        "months.\n"
        "第一条 合同期限\n"
        "本合同期限为两年，自2026年1月1日起至2027年12月31日止。合同期满后自动续期一年，除非任何一\n"
        "方在期满前三十日书面通知对方。\n"
    )
    assert unwrap(page).split("\n") == [
        "1. Term",
        "This Agreement commences on March 1, 2026 and continues for an initial term of twelve (12) months.",
        "第一条 合同期限",
        "本合同期限为两年，自2026年1月1日起至2027年12月31日止。合同期满后自动续期一年，除非任何一方在期满前三十日书面通知对方。",
    ]


def test_a_year_that_starts_a_wrapped_line_is_no_clause_number():
    page = (
        "1. Term\n"
        "This Agreement shall take effect on 2025-04-01 and shall remain in force until March 31,\n"
        "2027.\n"
        "2. Fees\n"
    )
    assert unwrap(page).split("\n") == [
        "1. Term",
        "This Agreement shall take effect on 2025-04-01 and shall remain in force until March 31, 2027.",
        "2. Fees",
    ]
