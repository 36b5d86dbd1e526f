"""Offline extraction from ended sessions (zh + en): facts, types, scopes, dates, junk, idempotency."""

from datetime import date

import pytest

from almanac.search.tokens import count_tokens
from almanac.text.dates import RESOLVED_DATE
from memories.models import Memory, SessionChunk
from memories.services.attribution import scope_attribution
from memories.services.dates import parse_occurred
from memories.services.extraction import chunk_spans, chunk_text, is_junk, session_extract
from memories.services.sessions import session_create, turn_add
from memories.tasks import session_extract_task


def attribute_scope(*, user, text: str) -> tuple[str, str | None]:
    found = scope_attribution(user=user, text=text)
    return found.scope, found.scope_key


pytestmark = pytest.mark.django_db

ZH_TURNS = [
    "你好",
    "我喜欢喝美式咖啡，不加糖。",
    "我们项目组上周五和 Vercel 开了续约会议。",
    "我们部门下个季度的预算是 200 万。",
    "我在 3 月 12 日拜访了客户华为。",
    "谢谢",
]
EN_TURNS = [
    "Hi!",
    "I always prefer concise bullet-point answers.",
    "Our team decided to use Postgres for Zephyr.",
    "I met the Vercel team last Friday to discuss the renewal.",
    "Our department budget for Q3 is 2M dollars.",
    "ok thanks",
]


def by_content(user):
    """Memories by content, without the day the extractor writes after a relative date
    (tested in test_a_relative_date_keeps_its_day)."""
    return {RESOLVED_DATE.sub("", m.content): m for m in Memory.objects.filter(owner=user)}


def test_chinese_session(alice, ended_session):
    session = ended_session(alice, ZH_TURNS)
    session_extract_task(session.pk)
    got = by_content(alice)
    coffee = got["我喜欢喝美式咖啡，不加糖。"]
    assert (coffee.memory_type, coffee.scope, coffee.acl) == ("semantic", "user", ["user:alice"])
    meeting = got["我们项目组上周五和 Vercel 开了续约会议。"]
    assert (meeting.memory_type, meeting.scope, meeting.scope_key) == ("episodic", "project", "apollo")
    assert meeting.occurred_at == date(2026, 3, 13)
    budget = got["我们部门下个季度的预算是 200 万。"]
    assert (budget.scope, budget.acl) == ("dept", ["dept:sales"])
    visit = got["我在 3 月 12 日拜访了客户华为。"]
    assert (visit.memory_type, visit.scope, visit.occurred_at) == ("episodic", "user", date(2026, 3, 12))
    assert not any(c in {"你好", "谢谢"} for c in got)
    assert not any("I can help" in c or "记下了" in c for c in got)  # assistant turns are not facts
    assert coffee.meta["session_id"] == session.pk
    session.refresh_from_db()
    assert session.extracted_at is not None


def test_english_session_with_two_projects(bob, ended_session):
    session = ended_session(bob, EN_TURNS)
    session_extract_task(session.pk)
    got = by_content(bob)
    assert got["I always prefer concise bullet-point answers."].scope == "user"
    decided = got["Our team decided to use Postgres for Zephyr."]
    assert (decided.memory_type, decided.scope, decided.scope_key) == ("semantic", "project", "zephyr")
    met = got["I met the Vercel team last Friday to discuss the renewal."]
    assert (met.memory_type, met.scope, met.occurred_at) == ("episodic", "user", date(2026, 3, 13))
    assert got["Our department budget for Q3 is 2M dollars."].acl == ["dept:finance"]
    assert not any(c.lower().startswith(("hi", "ok")) for c in got)


def test_task_is_idempotent(alice, ended_session):
    session = ended_session(alice, ZH_TURNS)
    session_extract_task(session.pk)
    count, chunks = Memory.objects.count(), SessionChunk.objects.count()
    assert count >= 4 and chunks >= 1
    session_extract_task(session.pk)
    assert (Memory.objects.count(), SessionChunk.objects.count()) == (count, chunks)
    # Even with the per-chunk records gone, dedup keeps the memories unique.
    SessionChunk.objects.all().delete()
    session_extract_task(session.pk)
    assert Memory.objects.count() == count


def test_covered_chunk_is_skipped(alice, ended_session):
    first = ended_session(alice, ["我喜欢喝美式咖啡，不加糖。"])
    session_extract_task(first.pk)
    second = ended_session(alice, ["我喜欢喝美式咖啡，不加糖。"])
    session_extract_task(second.pk)
    assert SessionChunk.objects.get(session=second).outcome == "covered"
    assert Memory.objects.count() == 1


def test_a_chunk_with_a_changed_fact_is_not_covered(alice, ended_session):
    # As close as a duplicate to what is known, but another weekday: extracted, not skipped.
    first = ended_session(alice, ["Apollo deploys happen on Tuesdays."])
    session_extract_task(first.pk)
    second = ended_session(alice, ["Apollo deploys happen on Thursdays."])
    session_extract_task(second.pk)
    assert SessionChunk.objects.get(session=second).outcome == "extracted"
    assert set(Memory.objects.values_list("content", flat=True)) == {
        "Apollo deploys happen on Tuesdays.",
        "Apollo deploys happen on Thursdays.",
    }


@pytest.mark.parametrize(
    "turn", ["Yesterday I had lunch with Dave at Din Tai Fung.", "昨天我和Dave在鼎泰丰吃了午饭。"]
)
def test_the_same_words_about_another_day_are_another_event(alice, ended_session, turn):
    first = ended_session(alice, [turn], day="2026-03-10")
    session_extract_task(first.pk)
    second = ended_session(alice, [turn], day="2026-03-20")
    session_extract_task(second.pk)
    assert SessionChunk.objects.get(session=second).outcome == "extracted"
    days = sorted(Memory.objects.filter(memory_type="episodic").values_list("occurred_at", flat=True))
    assert days == [date(2026, 3, 9), date(2026, 3, 19)]
    third = ended_session(alice, [turn], day="2026-03-20")  # the same day again: covered
    session_extract_task(third.pk)
    assert SessionChunk.objects.get(session=third).outcome == "covered"


def test_relative_dates_count_from_the_turn_not_the_session_start(alice, ended_session):
    from memories.models import Turn

    session = ended_session(
        alice,
        ["我们团队喜欢用飞书文档写周报。", "明天我们和宁德时代在杭州开会讨论电池合同。"],
        day="2026-03-17",
    )
    later = Turn.objects.filter(session=session, role="user").order_by("order").last()
    Turn.objects.filter(pk=later.pk).update(created_at="2026-03-19T10:00:00Z")  # two days into the session
    session_extract_task(session.pk)
    meeting = Memory.objects.get(content__contains="宁德时代")
    assert meeting.occurred_at == date(2026, 3, 20)


def test_the_same_sentence_said_on_two_days_is_two_events(alice, ended_session):
    from memories.models import Turn

    said = "Yesterday I had coffee with Carol from Acme."
    session = ended_session(alice, [said, said], day="2026-11-20")
    later = Turn.objects.filter(session=session, role="user").order_by("order").last()
    Turn.objects.filter(pk=later.pk).update(created_at="2026-11-25T10:00:00Z")
    session_extract_task(session.pk)
    days = sorted(
        Memory.objects.filter(content__contains="coffee with Carol").values_list("occurred_at", flat=True)
    )
    assert days == [date(2026, 11, 19), date(2026, 11, 24)]


def test_ending_enqueues_extraction(api, alice, django_capture_on_commit_callbacks):
    session = session_create(user=alice)
    api.post(
        f"/sessions/{session.pk}/turns",
        {"user": "alice", "role": "user", "content": "I prefer tea over coffee."},
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api.post(f"/sessions/{session.pk}/end", {"user": "alice"})
    assert response.status_code == 202 and response.json()["status"] == "ended"
    assert len(callbacks) == 2  # the extraction, and preference_extract on session.ended
    assert Memory.objects.filter(owner=alice, content="I prefer tea over coffee.").exists()


def test_open_session_is_not_extracted(alice):
    session = session_create(user=alice)
    turn_add(session=session, role="user", content="I prefer tea over coffee.")
    assert session_extract_task(session.pk) == {"skipped": "missing or still open"}
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    "text",
    [
        "你好",
        "谢谢！",
        "好的",
        "收到",
        "Hi",
        "thanks!",
        "OK",
        "ok thanks",
        "thank you so much",
        "你好，谢谢",
        "abc",
    ],
)
def test_junk(text):
    assert is_junk(text)


@pytest.mark.parametrize(
    "text", ["我喜欢喝美式咖啡", "I prefer tea", "Thanks to Carol, Apollo shipped on time"]
)
def test_not_junk(text):
    assert not is_junk(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我在 3 月 12 日拜访了客户", date(2026, 3, 12)),
        ("我在3月12号拜访了客户", date(2026, 3, 12)),
        ("2025年11月3日签约", date(2025, 11, 3)),
        ("上周五开了会", date(2026, 3, 13)),
        ("昨天开会了", date(2026, 3, 19)),
        ("12 月 30 日的年会", date(2025, 12, 30)),
        ("I met them last Friday", date(2026, 3, 13)),
        ("We signed on March 12", date(2026, 3, 12)),
        ("shipped 3 days ago", date(2026, 3, 17)),
        ("We like Postgres", None),
    ],
)
def test_parse_occurred(text, expected):
    assert parse_occurred(text, date(2026, 3, 20)) == expected


def test_scope_attribution(alice, bob, charlie):
    assert attribute_scope(user=alice, text="我们项目组决定用 Postgres") == ("project", "apollo")
    assert attribute_scope(user=bob, text="我们项目组 Zephyr 每周发布") == ("project", "zephyr")
    assert attribute_scope(user=alice, text="我们部门的目标是 200 万") == ("dept", "sales")
    assert attribute_scope(user=alice, text="Our department hires two people") == ("dept", "sales")
    assert attribute_scope(user=alice, text="I like tea") == ("user", None)
    assert attribute_scope(user=alice, text="我们项目组和我们部门一起开会") == ("user", None)  # ambiguous
    # Someone else's team, or the speaker's own view: the user's, never shared.
    assert attribute_scope(user=alice, text="他们项目组的预算只有3万元") == ("user", None)
    assert attribute_scope(user=alice, text="华为的项目组要求我们下周三交付") == ("user", None)
    assert attribute_scope(user=alice, text="我个人不喜欢我们团队的加班文化") == ("user", None)
    assert attribute_scope(user=alice, text="Personally I think our team works too late") == ("user", None)
    assert attribute_scope(user=alice, text="我们团队下周三上线") == ("project", "apollo")
    # The speaker about themselves, whatever team is named: private.
    for personal in (
        "I told the team that I am pregnant and will take leave in March",
        "My department head put me on a performance improvement plan",
        "我们团队的老板说我的绩效不合格",
        "The project manager at Vercel is called Tom Becker",  # someone else's project
    ):
        assert attribute_scope(user=alice, text=personal) == ("user", None), personal
    assert attribute_scope(user=charlie, text="our team ships on Fridays") == ("user", None)  # no project
    # bob is in Apollo and Zephyr: a team the text does not name could be either.
    assert attribute_scope(user=bob, text="Our team decided to give Vercel a 10% discount") == ("user", None)
    assert attribute_scope(user=bob, text="我们项目组决定给 Vercel 打九折") == ("user", None)
    assert attribute_scope(user=bob, text="Our team ships Apollo on Fridays") == ("project", "apollo")


def test_chunking_overlaps_and_bounds():
    text = "。".join(f"第{i}句话讲的是一个独立的事实" for i in range(60))
    spans = chunk_spans(text, 256, 32)
    assert len(spans) > 1
    assert all(count_tokens(text[c:e]) <= 256 for c, _, e in spans)
    assert "".join(text[s:e] for _, s, e in spans) == text  # the bodies: all of it, once
    long_word = "x" * 6000  # nothing to cut at: at a token count
    pieces = chunk_text(long_word, 256, 32)
    assert len(pieces) > 1 and all(count_tokens(p) <= 256 for p in pieces)


@pytest.mark.parametrize(
    "sentence",
    [
        "第{i}次周会上我们讨论了华东区域的销售目标和下一季度的市场预算安排。",  # ~35 characters
        "In meeting {i} we reviewed the regional sales targets and the marketing budget for next quarter. ",
    ],
    ids=["zh", "en"],
)
def test_chunks_overlap_by_about_32_tokens(sentence):
    text = "".join(sentence.format(i=i) for i in range(60)).strip()
    spans = chunk_spans(text, 256, 32)
    assert len(spans) > 3
    for context, start, end in spans[1:]:
        assert 24 <= count_tokens(text[context:start]) <= 32
        assert count_tokens(text[context:end]) <= 256
        assert (
            text[start - 1] in "。. " or text[start:end] == text[start:].strip()
        )  # a body begins a sentence
    assert [s for _, s, _ in spans] == sorted({s for _, s, _ in spans})


def test_the_overlap_is_context_not_extracted_again():
    from datetime import date

    from memories.services.extraction import skill_inputs

    text = " ".join(f"Client{i} renewed their contract for {i} years." for i in range(60))
    inputs = skill_inputs(text, date(2025, 3, 20))
    assert len(inputs) > 2 and all(item.get("context") for item in inputs[1:])
    assert " ".join(item["text"] for item in inputs) == text


def test_decay_archives_old_unimportant_memories(alice, remember):
    from datetime import timedelta

    from django.utils import timezone

    from memories.tasks import memory_decay_task

    old_low = remember(alice, "an unimportant old note about staplers", importance=0.1)
    old_high = remember(alice, "an important old note about the Apollo contract", importance=0.9)
    fresh_low = remember(alice, "a fresh unimportant note about lunch", importance=0.1)
    long_ago = timezone.now() - timedelta(days=200)
    Memory.objects.filter(pk__in=[old_low.pk, old_high.pk]).update(created_at=long_ago, last_access=None)
    Memory.objects.filter(pk=fresh_low.pk).update(created_at=long_ago, last_access=timezone.now())
    assert memory_decay_task() == 1
    assert memory_decay_task() == 0
    statuses = dict(Memory.objects.values_list("pk", "status"))
    assert (statuses[old_low.pk], statuses[old_high.pk], statuses[fresh_low.pk]) == (
        "archived",
        "active",
        "active",
    )
    assert Memory.objects.get(pk=old_low.pk).history.first().history_change_reason == "job:decay"


def test_a_paragraph_said_twice_is_extracted_once_on_the_first_run(alice, ended_session):
    paragraph = " ".join(EN_TURNS[1:5]) * 3  # long enough for several identical 256-char chunks
    session = ended_session(alice, [paragraph, paragraph])
    result = session_extract(session_id=session.pk)  # raised on duplicate chunks before
    assert result["new"] < result["chunks"]
    digests = list(SessionChunk.objects.filter(session=session).values_list("digest", flat=True))
    assert len(digests) == len(set(digests)) == result["new"]
    assert "I always prefer concise bullet-point answers." in by_content(alice)


def test_a_key_the_llm_names_meets_the_key_read_offline(alice, ended_session, settings):
    """Said in Chinese offline, corrected in English through an LLM that names the key:
    one thing, so the newer value supersedes the older."""
    import json

    from tests.skills.conftest import ChatServer

    settings.LLM_BASE_URL = ""
    session_extract(session_id=ended_session(alice, ["客户C合同金额30万元。"]).pk)
    older = Memory.objects.get(owner=alice)
    assert older.fact_key
    server = ChatServer()
    server.thread.start()
    try:
        settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_MAX_RETRIES = server.url, "test-model", 0
        text = "Client C's contract value is now 500k CNY."
        fact = {"text": text, "type": "fact", "importance": 0.9, "occurred_at": None, "key": "客户C.合同金额"}
        server.script = [json.dumps({"facts": [fact]})]
        session_extract(session_id=ended_session(alice, [text]).pk)
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
    newer = Memory.objects.get(owner=alice, content=text)
    older.refresh_from_db()
    assert newer.fact_key == older.fact_key
    assert (older.status, older.superseded_by_id) == ("superseded", newer.pk)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The Apollo budget is 50k.", "The Apollo budget is now 80k."),
        ("The Vercel budget is 30k.", "Not 30k, it's 50k."),
        ("客户C合同金额是200万。", "不是200万，是250万。"),
        ("Apollo预算是200万。", "Apollo预算从200万调整为250万。"),
    ],
)
def test_a_bare_amount_said_again_in_a_later_session_supersedes(alice, ended_session, settings, older, newer):
    settings.LLM_BASE_URL = ""
    session_extract(session_id=ended_session(alice, [older]).pk)
    session_extract(session_id=ended_session(alice, [newer], day="2026-03-27").pk)
    first, second = (Memory.objects.get(owner=alice, content=text) for text in (older, newer))
    assert (first.status, first.superseded_by_id) == ("superseded", second.pk)
    assert second.status == "active" and second.acl == first.acl
