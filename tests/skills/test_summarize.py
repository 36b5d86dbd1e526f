import pytest
from hypothesis import given
from hypothesis import settings as settings_hyp
from hypothesis import strategies as st

from almanac.search.tokens import count_tokens
from almanac.text.extractive import extractive_summary
from skills.services import skill_run

pytestmark = pytest.mark.django_db

EN = """Hi team, thanks for joining today. We talked about many things and it was a long meeting.
Acme Corp signed the renewal for $1.2M on 2025-03-12. The weather was nice and everyone enjoyed the lunch.
Carol will own PRD-2024-013 and the Zephyr migration. Some people felt that the discussion went on for far too long.
The budget for Q3 is capped at 30% above last year. We will probably meet again at some point to continue talking."""

ZH = """大家好，今天的会议主要讨论了几个问题，大家发言都很积极。王伟确认 Acme 的合同金额为 30万元，3 月 12 日签约。
午饭很好吃，大家都很开心，气氛一直很轻松。Apollo 项目的需求文档 PRD-2024-013 由 Carol 负责。
预算增长不超过 30%。会议气氛很好，讨论很热烈，大家都觉得很有收获。"""


def test_summarize_keeps_amounts_dates_names_ids_english(settings):
    settings.LLM_BASE_URL = ""
    summary = skill_run(name="summarize", input={"text": EN, "max_tokens": 45})["summary"]
    assert count_tokens(summary) <= 45
    for kept in ("$1.2M", "2025-03-12", "PRD-2024-013", "Carol"):
        assert kept in summary
    assert "weather" not in summary and "lunch" not in summary


def test_summarize_keeps_amounts_dates_ids_chinese(settings):
    settings.LLM_BASE_URL = ""
    summary = skill_run(name="summarize", input={"text": ZH, "max_tokens": 80, "lang": "zh"})["summary"]
    assert count_tokens(summary) <= 80
    for kept in ("30万元", "3 月 12 日", "PRD-2024-013", "30%"):
        assert kept in summary
    assert "午饭" not in summary


def test_summarize_keep_terms_rank_first(settings):
    settings.LLM_BASE_URL = ""
    text = "The office moved to a new floor last year. 王伟负责华东区的客户关系维护工作。 Lunch is served at noon every day."
    summary = skill_run(name="summarize", input={"text": text, "max_tokens": 20, "keep": ["王伟"]})["summary"]
    assert summary.startswith("王伟负责") and count_tokens(summary) <= 20


def test_summarize_short_text_is_returned_whole(settings):
    settings.LLM_BASE_URL = ""
    assert skill_run(name="summarize", input={"text": "Acme renewed.", "max_tokens": 50}) == {
        "summary": "Acme renewed."
    }


@pytest.mark.parametrize("text", [EN, ZH, EN + "\n" + ZH, "word " * 400, "很长的句子没有任何标点龘齉" * 60])
def test_summarize_respects_every_budget(text):
    previous = ""
    for budget in [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 400]:
        summary = extractive_summary(text, budget)
        assert count_tokens(summary) <= budget, (budget, summary)
        assert "\ufffd" not in summary  # never half a character
        assert summary.strip() or budget < 3, budget
        assert summary == extractive_summary(text, budget)  # deterministic
        previous = summary
    assert previous


def test_summarize_keeps_original_order():
    summary = extractive_summary(EN, 60)
    assert summary.index("$1.2M") < summary.index("PRD-2024-013") < summary.index("30%")


def test_summarize_never_cuts_a_word():
    text = "Internationalization considerations dominate " * 20
    words = set(text.split())
    for budget in (3, 7, 11):
        summary = extractive_summary(text, budget)
        assert set(summary.split()) <= words, summary


PIECES = [
    "Acme Corp",
    "签了合同",
    "$1.2M",
    "¥30万",
    "PRD-2024-013",
    "on 2025-03-12",
    "3 月 12 日",
    "。",
    ". ",
    "\n",
    "，",
    "the",
    "team",
    "Internationalization",
    "龘",
    "😀",
    "  ",
]


@settings_hyp(max_examples=60, deadline=None)
@given(
    parts=st.lists(st.sampled_from(PIECES), min_size=1, max_size=80),
    budget=st.integers(min_value=1, max_value=60),
)
def test_summarize_budget_property(parts, budget):
    text = " ".join(parts)
    summary = extractive_summary(text, budget)
    assert count_tokens(summary) <= budget
    assert "\ufffd" not in summary


def test_summarize_prefers_chinese_names_without_keep():
    text = "会议开得很长，大家讨论了很多问题，气氛也还不错。张伟和李娜在上海负责华东区。天气一直很好，午饭也很好吃。"
    summary = extractive_summary(text, 20)
    assert "张伟" in summary and count_tokens(summary) <= 20


def test_summarize_ranks_terms_above_chatter():
    text = "我们聊了很多，大家都挺开心的，下次再继续。新版《数据安全规范》要求所有接口统一登录。午饭吃得很好，下午也没什么事情。"
    summary = extractive_summary(text, 30)
    assert summary == "新版《数据安全规范》要求所有接口统一登录。"


def test_lines_stay_lines_and_sign_offs_are_filler():
    # A page's lines are separate messages and events: a summary must not run them into
    # one sentence ("Location: Zoom Best,"), and an e-mail sign-off is not a fact.
    text = "\n".join(
        [
            "2026-11-20 calendar: Apollo pilot review with Vercel. Location: Zoom",
            "Best,",
            "2026-11-21 email: Vercel asks for a 10% discount on the 120k EUR renewal.",
            "此致",
            "Some general chatter about the weather and lunch plans that goes on and on.",
        ]
    )
    summary = extractive_summary(text, 55)
    assert "Vercel.\n2026-11-21 email: Vercel asks" in summary  # two messages, two lines
    assert "Best" not in summary and "此致" not in summary and "weather" not in summary
    assert count_tokens(summary) <= 55


def test_a_page_summary_keeps_the_dated_and_costed_facts_not_greetings_or_fragments():
    # Every line of a wiki page starts with "[date] author:" and names the page's customer:
    # neither tells its lines apart, so neither may decide what is kept.
    text = "\n".join(
        [
            "[2026-11-07] lee@vercel.example: Apollo pilot for Vercel — next steps: Hi Alice,",
            "[2026-11-08] carol-acme: SSO for the Vercel pilot: Vercel needs SAML SSO via Okta before 2026-12-01.",
            "[2026-11-09] alice@acme.com: Vercel pilot review:",
            "Location: Zoom",
            "Alice",
            "[2026-11-10] bob@acme.com: Vercel renewal is 200 seats at $120,000, due 2026-12-15.",
            "[2026-11-11] dave@acme.com: Thanks Vercel!",
            "[2026-11-12] carol-acme: Vercel asked about the weather in Frankfurt for the offsite.",
        ]
    )
    summary = extractive_summary(text, 90, keep=["Vercel"], title="Vercel")
    assert "2026-12-01" in summary and "$120,000" in summary and "2026-12-15" in summary
    assert "Hi Alice" not in summary and "Location: Zoom" not in summary and "Thanks" not in summary
    assert count_tokens(summary) <= 90 < count_tokens(text)


def test_a_long_sentence_is_cut_between_clauses_never_inside_a_number():
    from almanac.text.extractive import _units, extractive_summary

    text = (
        "[2026-11-30] wang@catl.example: 关于续约报价的回复: 王伟您好，我司同意按八五折执行，"
        "首年费用为¥297,500元，请于12月18日前提供正式合同，会议时间定在周三15:30，王伟东"
    )
    units = [unit for unit, _, _ in _units(text, 20)]
    assert "首年费用为¥297,500元，" in units and "会议时间定在周三15:30，" in units
    fullwidth = [
        unit
        for unit, _, _ in _units("首年费用为¥297，500元，会议时间定在周三15：30，请于12月18日前回复" * 3, 20)
    ]
    assert "首年费用为¥297，500元，" in fullwidth and "会议时间定在周三15：30，" in fullwidth
    assert units[0].startswith("[2026-11-30] wang@catl.example:") and "关于续约" in units[0]
    for budget in (20, 30, 40):
        summary = extractive_summary(text, budget)
        assert "297,500" in summary or "¥297" not in summary
        assert "15:30" in summary or "15:" not in summary


def test_a_clause_from_the_middle_of_a_line_keeps_the_line_s_date():
    from almanac.text.extractive import extractive_summary

    text = (
        "[2026-11-30] wang@catl.example: 关于续约报价的回复: 王伟您好，我司同意按八五折执行，"
        "首年费用为¥297,500元，请于12月18日前提供正式合同，会议时间定在周三15:30，王伟东\n"
        "[2026-12-01] bob@acme.com: ok thanks"
    )
    for budget in (30, 45, 60):
        summary = extractive_summary(text, budget)
        assert summary.startswith("[2026-11-30] ") and summary.count("[2026-11-30]") == 1, summary
        assert count_tokens(summary) <= budget
