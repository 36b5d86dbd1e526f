"""Supersede: a newer memory stating another value for the same thing (same key, same
scope) replaces the older one in recall and context; restoring or deleting undoes it."""

import hashlib
import json
from datetime import date

import pytest

from almanac.models import AuditEvent
from memories.models import Memory, MemoryAuditText
from memories.selectors import memory_search
from memories.services.memories import memory_create, memory_delete
from memories.services.rows import memory_set_status

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]

PAIRS = [
    # (older, newer, a query that finds both)
    ("客户C合同金额30万元", "客户C合同金额调整为50万元", "客户C合同金额"),
    (
        "The Vercel renewal budget is $30k",
        "Actually, the Vercel renewal budget is $50k",
        "Vercel renewal budget",
    ),
    ("合同签约日期是3月12日", "合同签约日期改为3月19日", "合同签约日期"),
    ("The Apollo launch date is March 12", "The Apollo launch date moved to March 19", "Apollo launch date"),
    ("Apollo项目负责人是张三", "Apollo项目由李四负责", "Apollo项目负责人"),
    ("The owner of the Apollo budget is Bob", "Carol owns the Apollo budget", "Apollo budget owner"),
    ("以后报销都走电子流程", "以后报销都走纸质流程", "报销流程"),
    ("I prefer window seats on flights", "I prefer aisle seats on flights now", "seats on flights"),
]


def _found(user, query) -> list[int]:
    return [hit.memory.pk for hit in memory_search(user=user, query=query, top_k=10)]


@pytest.mark.parametrize(("old_text", "new_text", "query"), PAIRS)
def test_newer_value_supersedes_the_older(alice, remember, old_text, new_text, query):
    old = remember(alice, old_text)
    new = remember(alice, new_text)
    old.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == new.pk
    assert new.status == "active" and new.fact_key == old.fact_key != ""
    found = _found(alice, query)
    assert new.pk in found and old.pk not in found


def test_context_shows_only_the_current_value(api, alice, remember):
    remember(alice, "客户C合同金额30万元")
    remember(alice, "客户C合同金额调整为50万元")
    response = api.post("/context", {"user": "alice", "task": "客户C的合同金额是多少？"})
    assert response.status_code == 200, response.content
    text = response.json()["prompt"] + json.dumps(response.json()["blocks"], ensure_ascii=False)
    assert "50万元" in text and "30万元" not in text


@pytest.mark.parametrize(
    ("old_text", "correction"),
    [("客户C合同金额30万元", "不是30万，是50万"), ("The Vercel budget is $30k", "Not 30k, it's 50k")],
)
def test_an_explicit_correction_without_a_subject_supersedes(alice, remember, old_text, correction):
    other = remember(alice, "客户D合同金额80万元")
    old = remember(alice, old_text)
    new = remember(alice, correction)
    old.refresh_from_db()
    other.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == new.pk
    assert other.status == "active"
    assert new.fact_key == old.fact_key  # it speaks of that thing from now on


def test_a_correction_with_its_subject_supersedes(alice, remember):
    old = remember(alice, "客户C合同金额30万元")
    new = remember(alice, "客户C合同金额不是30万，是50万")
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk


# A bare amount (a magnitude, no currency) and the ways a change or a correction is said,
# zh and en, each with a question that asks for the value and the value only the older says.
BARE = [
    ("The Apollo budget is 50k.", "The Apollo budget is now 80k.", "What is the Apollo budget?", "50k"),
    (
        "The Vercel budget is 30k.",
        "The Vercel budget is not 30k, it's 50k.",
        "What is the Vercel budget?",
        "30k",
    ),
    ("The Vercel budget is 30k.", "Not 30k, it's 50k.", "What is the Vercel budget?", "30k"),
    (
        "The Apollo budget is 50k.",
        "The Apollo budget went from 50k to 80k.",
        "What is the Apollo budget?",
        "is 50k",
    ),
    ("Apollo预算是200万。", "不是200万，是250万。", "Apollo预算是多少？", "200万。"),
    ("Apollo预算是200万。", "Apollo预算不是200万，是250万。", "Apollo预算是多少？", "200万。"),
    ("Apollo预算是200万。", "Apollo预算改为250万。", "Apollo预算是多少？", "200万"),
    ("Apollo预算是200万。", "Apollo预算从200万调整为250万。", "Apollo预算是多少？", "是200万"),
    ("Apollo预算是200万元。", "Apollo预算调整为250万。", "Apollo预算是多少？", "200万"),
]


@pytest.mark.parametrize(("old_text", "new_text", "task", "old_value"), BARE)
def test_a_bare_amount_is_superseded_on_the_write_path(api, alice, old_text, new_text, task, old_value):
    first = api.post("/memories", {"user": "alice", "content": old_text})
    second = api.post("/memories", {"user": "alice", "content": new_text})
    assert first.status_code == second.status_code == 201, second.content
    old = api.get(f"/memories/{first.json()['id']}", user="alice").json()
    assert old["status"] == "superseded" and old["superseded_by"] == second.json()["id"]
    found = api.post("/memories/search", {"user": "alice", "query": task}).json()
    context = api.post("/context", {"user": "alice", "task": task}).json()
    text = context["prompt"] + json.dumps(context["blocks"], ensure_ascii=False)
    assert old_value not in text.replace(new_text, "")
    found_ids = [hit["memory"]["id"] for hit in found["results"]]
    assert first.json()["id"] not in found_ids  # the replaced value is never recalled
    # "Not 30k, it's 50k." holds no word of the question: only its meaning may find it.
    if not new_text.startswith(("Not", "不是")):
        assert found_ids == [second.json()["id"]]
        assert new_text in text


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The Apollo budget is 50k", "The Hermes budget is 80k"),  # another subject
        ("Apollo has 12 engineers", "Apollo budget 80k"),  # another attribute
        ("Apollo预算是200万", "Hermes预算是250万"),
        ("Apollo预算是200万", "Apollo有12名工程师"),
        ("The Apollo budget is 50k", "Not 30k, it's 80k"),  # corrects a value nobody said
        ("Apollo预算是200万", "不是300万，是250万"),
        ("The Apollo team moved from Building A to Building B", "The Apollo team moved from Slack to Teams"),
    ],
)
def test_an_unrelated_amount_never_supersedes(alice, remember, first, second):
    old = remember(alice, first)
    remember(alice, second)
    old.refresh_from_db()
    assert old.status == "active" and old.superseded_by_id is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("客户C合同金额30万元", "客户D合同金额50万元"),  # another subject
        (
            "Apollo deploy window starts at 3pm",
            "Apollo deploy window starts at 3 pm, as agreed",
        ),  # same value
        ("distinct fact number 1: pears orchard 37", "distinct fact number 4: pears orchard 148"),
        ("I prefer tea", "I prefer coffee"),  # what is preferred is the value and the key: unknown
    ],
)
def test_what_is_not_the_same_thing_with_another_value_stays(alice, remember, first, second):
    old = remember(alice, first)
    memory_create(owner=alice, content=second)  # may be a duplicate: then nothing is written
    old.refresh_from_db()
    assert old.status == "active"


def test_only_the_same_scope_is_superseded(alice, remember):
    mine = remember(alice, "客户C合同金额30万元")
    remember(alice, "客户C合同金额调整为50万元", scope="project", scope_key="Apollo")
    mine.refresh_from_db()
    assert mine.status == "active"


def test_events_are_not_superseded(alice, remember):
    lunch = remember(alice, "Lunch with Dave cost $40", memory_type="episodic", occurred_at=date(2026, 3, 12))
    remember(alice, "Lunch with Dave cost $55", memory_type="episodic", occurred_at=date(2026, 3, 19))
    lunch.refresh_from_db()
    assert lunch.status == "active" and lunch.kind == "event"


def test_a_key_named_by_the_caller_supersedes(api, alice):
    first = api.post(
        "/memories", {"user": "alice", "content": "Apollo goes live in spring", "key": "Apollo go-live"}
    )
    second = api.post(
        "/memories", {"user": "alice", "content": "Apollo will go live in autumn", "key": "Apollo go-live"}
    )
    assert first.status_code == second.status_code == 201, second.content
    old = api.get(f"/memories/{first.json()['id']}", user="alice").json()
    assert old["status"] == "superseded" and old["superseded_by"] == second.json()["id"]
    assert second.json()["key"] == old["key"] != ""


def test_key_in_meta_is_read_as_well(alice, remember):
    old = remember(alice, "Apollo goes live in spring", meta={"key": "apollo.go_live"})
    remember(alice, "Apollo will go live in autumn", meta={"key": "apollo go live"})
    old.refresh_from_db()
    assert old.status == "superseded"


def test_supersede_is_audited_with_both_texts(alice, remember):
    old = remember(alice, "客户C合同金额30万元")
    new = remember(alice, "客户C合同金额调整为50万元")
    event = AuditEvent.objects.get(action="memory.supersede", object_id=str(old.pk))
    assert event.detail["superseded_by"] == new.pk and event.actor == "alice"
    assert event.detail["before_digest"] == hashlib.sha256("客户C合同金额30万元".encode()).hexdigest()
    assert event.detail["after_digest"] == hashlib.sha256("客户C合同金额调整为50万元".encode()).hexdigest()
    texts = MemoryAuditText.objects.get(event=event)
    assert (texts.before, texts.after) == ("客户C合同金额30万元", "客户C合同金额调整为50万元")


def test_restore_brings_the_older_back_unlinked(api, alice, remember):
    old = remember(alice, "The Vercel renewal budget is $30k")
    new = remember(alice, "The Vercel renewal budget is $50k")
    response = api.patch(f"/memories/{old.pk}", {"user": "alice", "status": "active"})
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "active" and response.json()["superseded_by"] is None
    found = _found(alice, "Vercel renewal budget")
    assert old.pk in found and new.pk in found
    new.refresh_from_db()
    assert new.status == "active"


def test_reactivate_by_status_service_unlinks(alice, remember):
    old = remember(alice, "合同签约日期是3月12日")
    remember(alice, "合同签约日期改为3月19日")
    memory_set_status(memories=Memory.objects.filter(pk=old.pk), status="active", user=alice, reason="admin")
    old.refresh_from_db()
    assert old.status == "active" and old.superseded_by_id is None
    event = AuditEvent.objects.get(action="memory.reactivate", object_id=str(old.pk))
    assert event.detail["superseded_by"] is not None


def test_deleting_the_successor_brings_the_older_back(alice, remember):
    old = remember(alice, "Apollo项目负责人是张三")
    new = remember(alice, "Apollo项目负责人改为李四")
    memory_delete(memory=new, user=alice)
    old.refresh_from_db()
    assert old.status == "active" and old.superseded_by_id is None
    assert old.pk in _found(alice, "Apollo项目负责人")


def test_deleting_a_middle_successor_hands_the_oldest_to_the_newest(alice, remember):
    first = remember(alice, "Apollo项目负责人是张三")
    middle = remember(alice, "Apollo项目负责人改为李四")
    newest = remember(alice, "Apollo项目负责人改为王五")
    middle.refresh_from_db()
    assert middle.superseded_by_id == newest.pk
    memory_delete(memory=middle, user=alice)
    first.refresh_from_db()
    assert first.status == "superseded" and first.superseded_by_id == newest.pk
    assert first.pk not in _found(alice, "Apollo项目负责人")


def test_superseded_cannot_be_set_by_hand(api, alice, remember):
    memory = remember(alice, "The Vercel renewal budget is $30k")
    response = api.patch(f"/memories/{memory.pk}", {"user": "alice", "status": "superseded"})
    assert response.status_code == 422


def test_list_superseded_and_visibility(api, alice, charlie, remember):
    old = remember(alice, "客户C合同金额30万元")
    new = remember(alice, "客户C合同金额调整为50万元")
    listed = api.get("/memories", user="alice", status="superseded").json()
    assert [m["id"] for m in listed["items"]] == [old.pk]
    assert listed["items"][0]["superseded_by"] == new.pk
    active = api.get("/memories", user="alice").json()
    assert [m["id"] for m in active["items"]] == [new.pk]
    assert api.get(f"/memories/{old.pk}", user="charlie").status_code == 404
    assert api.get("/memories", user="alice", status="outdated").status_code == 422


def test_stored_keys_are_refolded_by_the_one_rule_and_named_keys_stay(alice, remember):
    """The data migration `refold_fact_keys`: a key spelt by the old amount reader, which
    left the period's words in it ("… 年"), becomes the key the text gives now, so the
    memory is superseded by a newer value of the same thing; a key the text does not give
    (named by an extractor or a caller) stays."""
    from importlib import import_module

    from django.apps import apps

    refold = import_module("memories.migrations.0002_refold_fact_keys").refold
    yearly = remember(alice, "客户C服务费3万元/年")
    named = remember(alice, "The deploy checklist lives in the wiki", key="deploy checklist")
    Memory.objects.filter(pk=yearly.pk).update(fact_key="c 客户 年 服务 服务费")
    named_key = named.fact_key
    refold(apps, None)
    yearly.refresh_from_db()
    named.refresh_from_db()
    assert yearly.fact_key == "c 客户 服务 服务费"
    assert named.fact_key == named_key != ""
    newer = remember(alice, "客户C服务费调整为4万元/年")
    yearly.refresh_from_db()
    assert yearly.status == "superseded" and yearly.superseded_by_id == newer.pk
