"""Session extraction without an LLM (the rule-based fallback) on short Chinese facts, long
turns without sentence ends, and Chinese dates; English alongside as the control."""

import re
from datetime import date

import pytest

from almanac.search.tokens import count_tokens
from almanac.text.dates import RESOLVED_DATE
from memories.models import Memory
from memories.services.extraction import chunk_spans, is_junk, session_extract

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _offline(settings):
    settings.LLM_BASE_URL = ""


def extract(user, ended_session, turns: list[str]) -> dict[str, Memory]:
    session = ended_session(user, turns)  # dated 2026-03-20
    session_extract(session_id=session.pk)
    return {m.content: m for m in Memory.objects.filter(owner=user)}


# --- A: short facts and names -----------------------------------------------------------


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        ("我住在上海。", "我住在上海。"),
        ("张三是CFO。", "张三是CFO。"),
        ("预算是3.5万元。", "预算是3.5万元。"),
        ("好的，谢谢！预算是5万元。", "预算是5万元。"),
        ("我叫李雷。", "我叫李雷。"),
        ("I live in Shanghai.", "I live in Shanghai."),
        ("Alice is our CFO.", "Alice is our CFO."),
        ("Call me Bob.", "Call me Bob."),
    ],
)
def test_a_short_fact_is_kept_in_both_languages(alice, ended_session, turn, expected):
    assert set(extract(alice, ended_session, [turn])) == {expected}


def test_acknowledgements_are_still_dropped(alice, ended_session):
    turns = [
        "好的",
        "谢谢",
        "ok thanks",
        "好的，谢谢！",
        "我知道了。",
        "谢谢你的帮助！",
        "好的，明天见",
        "Thanks!",
    ]
    assert extract(alice, ended_session, turns) == {}


@pytest.mark.parametrize(
    "text", ["我叫李雷。", "张三是CFO", "预算5万", "我住在上海", "Call me Bob", "I'm 30"]
)
def test_short_facts_with_a_name_or_number_are_not_junk(text):
    assert not is_junk(text)


@pytest.mark.parametrize("text", ["好的", "谢谢", "ok thanks", "嗯嗯", "abc"])
def test_junk_stays_junk(text):
    assert is_junk(text)


# --- B: long turns without sentence ends -------------------------------------------------

# Clauses up to character 255, where the old fixed cut at 256 split the amount after its "3".
ZH_LONG = (
    "关于和Acme的合作，我们今天确认了几件事情，"
    + "".join(f"第{i}项条款已经由双方法务审核通过，" for i in range(1, 14))
    + "最终合同金额为35万元，付款分三期完成，首付款在签约后十个工作日内支付，"
    "尾款在项目验收后支付，双方同意由我来负责后续的交付协调工作"
)
EN_LONG = (
    "For Acme, "
    + "".join(f"clause {i} was reviewed by both legal teams, " for i in range(1, 6))
    + "the final contract amount is $350,000 paid in three parts, the first within ten working "
    "days of signing, the rest after acceptance, and I will coordinate the delivery"
)


@pytest.mark.parametrize("text", [ZH_LONG, EN_LONG], ids=["zh", "en"])
def test_a_long_turn_is_cut_between_clauses_and_not_extracted_twice(alice, ended_session, text):
    assert len(text) > 256 and "。" not in text and ". " not in text and text.index("35") == 255
    contents = [RESOLVED_DATE.sub("", c) for c in extract(alice, ended_session, [text])]
    amount = "35万元" if "35万元" in text else "$350,000"
    assert sum(amount in c for c in contents) == 1
    assert not any(c.endswith(("3。", "3.", "$3.", "$350.")) for c in contents)
    # No clause is stored twice (the old overlapping second window repeated one).
    clauses = [c for c in re.split(r"，|, ", text) if len(c) > 6]
    for clause in clauses:
        assert sum(clause.lower() in c.lower() for c in contents) == 1, clause


def test_chunks_never_split_a_number():
    text = "合作条款" * 62 + "最终合同金额为35万元" + "付款分三期完成" * 40  # no punctuation at all
    spaced = "very " * 250 + "the total was $35 万元 for Apollo " + "and more " * 100
    for sample in (text, spaced):
        spans = chunk_spans(sample, 256, 32)
        assert len(spans) > 1 and all(count_tokens(sample[c:e]) <= 256 for c, _, e in spans)
        for size in range(60, 256, 7):  # wherever the token count falls
            for context, start, end in chunk_spans(sample, size, 16):
                assert not sample[start:end].endswith(("3", "35", "35万", "$3", "$35", "$35 万")), size
                assert not sample[context:end].startswith(("5万元", "5 万元", "万元")), size


def test_a_sentence_of_clauses_is_cut_between_clauses():
    text = "，".join(f"第{i}项条款已经审核" for i in range(60)) + "。"
    spans = chunk_spans(text, 256, 32)
    assert len(spans) > 1 and all(count_tokens(text[c:e]) <= 256 for c, _, e in spans)
    assert all(text[s:e].endswith(("，", "。")) and text[s:e].startswith("第") for _, s, e in spans)
    assert "".join(text[s:e] for _, s, e in spans) == text  # nothing lost, no clause read twice


# --- C: dates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turn", "occurred"),
    [
        ("2024-03-05上线了Apollo。", date(2024, 3, 5)),
        ("2024.3.5签约了Acme。", date(2024, 3, 5)),
        ("去年3月5日我们和Acme签约。", date(2025, 3, 5)),
        ("三月五日我们和客户开会。", date(2026, 3, 5)),
        ("二〇二四年三月五日我们签了合同。", date(2024, 3, 5)),
        ("12月1日我们和Acme开会。", date(2025, 12, 1)),
        ("The Zephyr launch happened on 2024-03-05.", date(2024, 3, 5)),
        ("We met Acme on December 1.", date(2025, 12, 1)),
        ("I met the Vercel team last Friday.", date(2026, 3, 13)),
    ],
)
def test_an_event_gets_its_date(alice, ended_session, turn, occurred):
    (memory,) = extract(alice, ended_session, [turn]).values()
    assert (memory.memory_type, memory.occurred_at) == ("episodic", occurred)


@pytest.mark.parametrize("turn", ["我一周三次健身。", "每周一开例会。", "We meet every Monday."])
def test_a_routine_is_not_a_dated_event(alice, ended_session, turn):
    (memory,) = extract(alice, ended_session, [turn]).values()
    assert (memory.memory_type, memory.occurred_at) == ("semantic", None)


@pytest.mark.parametrize(
    "text", ["Thanks, that's all for now.", "Sounds good to me.", "谢谢你的帮助，我明白了", "收到，马上处理"]
)
def test_filler_an_llm_returns_is_junk_too(text):
    assert is_junk(text)
