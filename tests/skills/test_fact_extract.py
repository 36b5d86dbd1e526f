"""The fact_extract skill's offline path (skills.builtin.fact_extract): what is a fact, of
which type, dated when."""

import json
import re
from datetime import date

import pytest

from skills.builtin.fact_extract import extract_offline
from skills.services import skill_run

pytestmark = pytest.mark.django_db

ZH_CONVERSATION = """用户：你好！
助手：你好，有什么可以帮你？
用户：我喜欢靠窗的座位，讨厌红眼航班。
用户：我们上周五和 Acme 开会了，确定了合同金额是 30 万元。
用户：3 月 12 日 Apollo 项目正式上线。
用户：我们项目组决定下个季度改用 PostgreSQL。
用户：预算截止日期是什么时候？
用户：我在上海办公室工作，负责华东区的销售。
用户：谢谢！"""

EN_CONVERSATION = """User: Hi there!
Assistant: Hello! I will remember that you like tea. How can I help?
User: I prefer morning meetings and I never take calls after 6pm.
User: We met with Globex last Friday to review the contract.
User: Our team decided to go with Postgres for the Apollo project.
User: The Zephyr launch happened on 2025-03-12.
User: My manager is Carol and she runs the platform team in Berlin.
User: What is the deadline again?
User: Thanks, that's all."""


def _by_text(facts):
    """Facts by text, without the day written after a relative date (tested on its own)."""
    return {re.sub(r" ?[（(]\d{4}-\d{2}-\d{2}[）)]", "", f["text"]): f for f in facts}


def test_fact_extract_chinese_types_and_dates(settings):
    settings.LLM_BASE_URL = ""
    out = skill_run(
        name="fact_extract", input={"text": ZH_CONVERSATION, "session_date": "2025-03-20", "lang": "zh"}
    )
    facts = _by_text(out["facts"])
    assert facts["我喜欢靠窗的座位，讨厌红眼航班。"]["type"] == "preference"
    meeting = facts["我们上周五和 Acme 开会了，确定了合同金额是 30 万元。"]
    assert (meeting["type"], meeting["occurred_at"]) == ("event", "2025-03-14")  # 上周五 of the week before
    assert meeting["importance"] >= 0.8  # 合同 / 金额
    assert facts["3 月 12 日 Apollo 项目正式上线。"]["occurred_at"] == "2025-03-12"
    assert facts["我们项目组决定下个季度改用 PostgreSQL。"]["type"] == "decision"
    assert facts["我在上海办公室工作，负责华东区的销售。"]["type"] == "fact"
    texts = " ".join(facts)
    assert "你好" not in texts and "谢谢" not in texts and "什么时候" not in texts
    assert len(facts) == 5


def test_fact_extract_english_types_and_relative_dates(settings):
    settings.LLM_BASE_URL = ""
    out = skill_run(name="fact_extract", input={"text": EN_CONVERSATION, "session_date": "2025-03-20"})
    facts = _by_text(out["facts"])
    pref = facts["I prefer morning meetings and I never take calls after 6pm."]
    assert pref["type"] == "preference" and pref["importance"] > 0.6  # "never"
    met = facts["We met with Globex last Friday to review the contract."]
    assert (met["type"], met["occurred_at"]) == ("event", "2025-03-14")
    assert facts["Our team decided to go with Postgres for the Apollo project."]["type"] == "decision"
    assert facts["The Zephyr launch happened on 2025-03-12."]["occurred_at"] == "2025-03-12"
    assert facts["My manager is Carol and she runs the platform team in Berlin."]["type"] == "fact"
    joined = " ".join(facts).lower()
    assert "like tea" not in joined  # the assistant's words are not the user's facts
    assert "hi there" not in joined and "thanks" not in joined and "deadline" not in joined
    assert len(facts) == 5


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("3月12日我们和客户开会。", "2025-03-12"),
        ("上周五我们见了王伟。", "2025-03-14"),
        ("下周一我们开会讨论预算。", "2025-03-24"),
        ("We had the kickoff meeting yesterday.", "2025-03-19"),
        ("The demo happened on March 5th.", "2025-03-05"),
    ],
)
def test_fact_extract_event_dates_relative_to_session(settings, sentence, expected):
    settings.LLM_BASE_URL = ""
    out = skill_run(name="fact_extract", input={"text": sentence, "session_date": "2025-03-20"})
    assert [(f["type"], f["occurred_at"]) for f in out["facts"]] == [("event", expected)]


def test_fact_extract_only_filler_gives_no_facts(settings):
    settings.LLM_BASE_URL = ""
    out = skill_run(
        name="fact_extract", input={"text": "User: hello\nUser: 谢谢！\nUser: ok thanks\n用户：好的"}
    )
    assert out == {"facts": []}


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("我叫王伟。", "fact"),
        ("我不吃香菜。", "preference"),
        ("请记住我喜欢用 Markdown 格式的回复。", "preference"),
        ("我们部门的报销流程是先找经理审批。", "fact"),
        ("Please remember that I always want answers in bullet points.", "preference"),
        ("Carol likes dark mode in every tool.", "preference"),
        ("We use tools like Jira and Confluence for tracking.", "fact"),
        ("The Q3 budget was approved at $2.5M.", "decision"),
        ("I'm based in Shanghai.", "fact"),
        ("I'm Bob.", "fact"),
        ("不确定Acme会不会续约，下周再跟进。", "fact"),  # unsure: no decision
        ("We did NOT sign with Acme last week.", "fact"),  # kept, negation and all
        ("我们没有和Acme签合同。", "fact"),
        ("我查过了，预算里没有", "fact"),  # a statement ending in 没有, not "…了…没有?"
    ],
)
def test_fact_extract_classifies(sentence, kind):
    assert [f["type"] for f in extract_offline(sentence)] == [kind]


@pytest.mark.parametrize(
    "sentence",
    [
        "That sounds great, thanks!",
        "好的，我明白了。",
        "哈哈哈，太好了！",
        "Book a flight to Beijing for next Monday.",
        "帮我订一张下周一去北京的机票。",
        "Can you book a flight for me?",
        "Good morning!",
        "Sure, go ahead.",
        "嗯嗯",
        "I'm tired.",
        # questions without a question mark
        "Did we sign the contract with Acme last week",
        "Do we have a budget for Q3",
        "Should we go with Postgres",
        "我们是否已经和Acme签约",
        "我们签了合同没有",
        "有没有人知道预算是多少",
        "Is Wang Wei coming tomorrow",
        "Is the budget enough",
        "华为什么时候付款",
        "谁负责华为的项目",
        "能否下周三交付",
        "王伟明天来不来",
        "合同金额是多少",
        "我们要不要和华为签约",
        "请问华为的报价是多少",
        "我们和华为签合同了没",
        "是不是下周交付",
        "我们下周签约，合同金额是多少",
        "Is Acme ready for the renewal",
        "Has it been approved by legal",
        "Did Acme sign the renewal contract",
        "Have they signed the Acme contract",
        "Shall I send the Acme proposal",
        "这是不是什么新规定",
        "华为要不要什么折扣",
        "谁负责华为的项目，王伟还是李娜",
        "华为的报价是多少，我忘了",
        "下午几点开会",
        # Chinese declines and "let me think"
        "不用，谢谢。",
        "算了，不用了",
        "没事，不用了",
        "我再想想",
        "让我考虑一下",
        "稍后再说",
        # what is supposed, not said
        "If we sign with Acme, the discount would be 15%.",
        "The discount would be 15% if we sign this week.",
        "如果我们和Acme签约，折扣是15%。",
        "假如下周三上线，我们就给Acme 20%折扣。",
    ],
)
def test_fact_extract_drops_filler_questions_and_requests(sentence):
    assert extract_offline(sentence) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "谁都知道华为是大客户",
        "没什么问题，下周三上线",
        "哪怕下雨也要去拜访华为",
        "华为或多或少有点不满",
        "这个方案没有什么问题，我们下周签约",
        "我们项目不需要什么审批就可以上线",
        "不管谁负责，预算都是50万",
        "无论哪个版本，都要在5月3日前交付",
        "不管客户来不来，发布会定在5月3日",
        "Do not deploy on Fridays",
        # diary lines without a subject
        "Have a meeting with Acme on Friday to sign the contract",
        "Was in Berlin last week for the Acme deal",
        "Did the migration of the Acme database",
        "Could not reach the client about Acme",
        "Should be done by Friday for Acme",
        "Has been approved by legal for Acme",
    ],
)
def test_indefinite_question_words_and_prohibitions_are_statements(sentence):
    assert len(extract_offline(sentence)) == 1


def test_fact_extract_remember_prefix_is_stripped_and_importance_raised():
    [fact] = extract_offline("User: 请记住，我对花生过敏，这点一定要记住。")
    assert fact["text"] == "我对花生过敏，这点一定要记住。" and fact["importance"] >= 0.8


# --- Issue 23: junk, preferences, dates, a subject carried over ------------------------------


@pytest.mark.parametrize(
    "junk",
    [
        "Thanks, that's all for now.",
        "Sounds good to me.",
        "Perfect, thank you for your help!",
        "That makes sense, talk soon.",
        "谢谢你的帮助，我明白了",
        "收到，马上处理",
        "好的，辛苦了，先这样吧",
        "明白了，我这就去安排",
    ],
)
def test_acknowledgements_thanks_and_sign_offs_are_not_facts(junk):
    assert extract_offline(junk) == []


@pytest.mark.parametrize(
    "text",
    ["以后报销都走电子流程。", "今后周会一律改到周一上午。", "From now on, always copy Priya on contract emails.",
     "Going forward, send invoices to ap@initech.com.", "I prefer short answers."],
)  # fmt: skip
def test_standing_wishes_are_preferences(text):
    (fact,) = extract_offline(text)
    assert (fact["type"], fact.get("kind")) == ("preference", "preference")


def test_a_dated_decision_keeps_its_day():
    (fact,) = extract_offline("上周五我们和客户开会，决定合同延期到六月。", date(2025, 3, 20))
    assert fact["type"] == "decision" and fact["occurred_at"] == "2025-03-14"
    assert fact["text"].startswith("上周五（2025-03-14）")
    (fact,) = extract_offline("Yesterday we agreed to drop the Q2 webinar.", date(2025, 3, 20))
    assert fact["text"].startswith("Yesterday (2025-03-19) we agreed")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Initech called this morning. They need the SOC 2 report by May.",
            "Initech needs the SOC 2 report by May.",
        ),
        (
            "Priya Shah joined last week. She wants weekly status mails.",
            "Priya Shah wants weekly status mails.",
        ),
        ("京东那边来了消息。他们要求下周交付样品。", "京东要求下周"),
        ("我们的对接人是刘洋。他的邮箱是liu@jd.com。", "刘洋的邮箱是liu@jd.com。"),
    ],
)
def test_a_pronoun_takes_the_one_name_of_the_sentence_before(text, expected):
    assert any(f["text"].startswith(expected) for f in extract_offline(text, date(2025, 3, 20)))


def test_an_ambiguous_pronoun_is_left_alone():
    facts = extract_offline("Acme and Globex both replied. They want a 12% discount.")
    assert any(
        f["text"] == "She wants weekly mails."
        for f in extract_offline("Priya met Tom. She wants weekly mails.")
    )
    assert any(f["text"] == "They want a 12% discount." for f in facts)


def test_the_context_is_read_for_references_not_extracted():
    out = skill_run(
        name="fact_extract",
        input={
            "text": "They want a 12% discount.",
            "context": "Acme called this morning.",
            "session_date": "2025-03-20",
        },
    )
    assert [f["text"] for f in out["facts"]] == ["Acme wants a 12% discount."]


# --- Keys: what a fact states one value of, named alike offline and by an LLM -------------


@pytest.mark.parametrize(
    ("text", "llm_key"),
    [
        ("客户C合同金额30万元。", "客户C.合同金额"),
        ("Apollo的负责人是王伟。", "Apollo.负责人"),
        ("The owner of Apollo is Maria Lopez.", "Apollo.owner"),
        ("The Zephyr budget is $40k.", "Zephyr.budget"),
    ],
)
def test_offline_and_llm_paths_name_the_same_key(text, llm_key, chat_server, settings):
    from almanac.text.claims import claim

    expected = claim(text).key
    assert expected
    chat_server.script = [
        json.dumps({"facts": [{"text": text, "type": "fact", "importance": 0.8, "key": llm_key}]})
    ]
    [by_llm] = skill_run(name="fact_extract", input={"text": f"User: {text}"})["facts"]
    settings.LLM_BASE_URL = ""
    [offline] = skill_run(name="fact_extract", input={"text": f"User: {text}"})["facts"]
    assert by_llm["key"] == offline["key"] == expected


def test_an_event_has_no_key_and_a_plain_statement_none_either(settings):
    settings.LLM_BASE_URL = ""
    facts = extract_offline(
        "用户：上周五我们和 Acme 开会，确定合同金额 30 万元。\n用户：我在上海办公室工作。", date(2025, 3, 20)
    )
    assert [f.get("key") for f in facts] == [None, None]


@pytest.mark.parametrize(
    "text",
    [
        "以后报销都走电子流程。",
        "从现在开始，所有合同都要法务审核。",
        "From now on, always cc me on invoices.",
        "I prefer aisle seats.",
    ],
)
def test_a_standing_wish_is_a_preference_to_the_extractor_and_to_memories(text):
    from almanac.text.claims import kind_infer

    [fact] = extract_offline(f"User: {text}")
    assert (fact["type"], fact["kind"]) == ("preference", "preference")
    assert kind_infer(content=text, meta={}, memory_type="semantic") == "preference"
