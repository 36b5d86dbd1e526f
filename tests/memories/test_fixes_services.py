"""Fixes: purge redaction of JSON-escaped text, fact signatures with units, episodic dates
in the duplicate check, compression that loses no fact, PATCH status, `user` as a query
parameter on body endpoints, truncation of long JSON-object tool outputs."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from memories import conf, services
from memories.models import Memory, MemoryLink
from memories.services import compression
from memories.services.memories import fact_signature
from memories.services.sessions import tool_output_truncate
from memories.tasks import memory_compress_task, session_extract_task
from skills.models import SkillRun
from tests.memories.conftest import at_cosine, unit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _offline_llm(settings):
    settings.LLM_BASE_URL = ""


def _quoting(needle: str) -> list[SkillRun]:
    return [
        r
        for r in SkillRun.objects.all()
        if needle in json.dumps([r.input, r.output, r.error], ensure_ascii=False)
    ]


# --- 1. purge redacts runs that quote the text JSON-escaped ----------------------------


@pytest.mark.parametrize(
    ("turn", "secret"),
    [
        ('My passport number is "E12345678".', "E12345678"),
        ("我的护照号码是“E12345678”，签发地是C:\\上海。", "E12345678"),
        ('The "vault" code is V-99\\7 and the PIN is 4411.', "4411"),
    ],
)
def test_purge_redacts_the_runs_that_quote_it(api, alice, ended_session, turn, secret):
    session = ended_session(alice, [turn])
    session_extract_task(session.pk)
    memory = Memory.objects.get(owner=alice, content__contains=secret)
    assert _quoting(secret)  # the premise: the extraction run quotes it
    assert api.delete(f"/memories/{memory.pk}", user="alice", purge="true").status_code == 204
    assert _quoting(secret) == []


# --- 2. a different amount or magnitude is another fact --------------------------------


def _post(api, content, **kw):
    return api.post("/memories", {"user": "alice", "content": content, **kw})


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("合同金额是3万元", "合同金额是3千元"),
        ("The Acme deal is worth 3 million USD", "The Acme deal is worth 3 billion USD"),
        ("The Acme deal is worth 3 thousand dollars", "The Acme deal is worth 3 million dollars"),
    ],
)
def test_a_different_magnitude_is_not_a_duplicate(api, alice, first, second):
    assert _post(api, first).status_code == 201
    response = _post(api, second)
    assert response.status_code == 201, response.json()
    assert response.json().get("duplicate_of") is None
    assert _post(api, second).status_code == 200  # the same fact again still is one


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


# --- 3. the same episodic event on another day is another event ------------------------


def test_an_episode_on_another_day_is_not_a_duplicate(api, alice):
    kw = {"memory_type": "episodic"}
    first = _post(api, "Met Acme about the renewal", occurred_at="2026-03-13", **kw)
    assert first.status_code == 201
    later = _post(api, "Met Acme about the renewal", occurred_at="2026-05-15", **kw)
    assert later.status_code == 201 and later.json()["occurred_at"] == "2026-05-15"
    again = _post(api, "Met Acme about the renewal", occurred_at="2026-05-15", **kw)
    assert again.status_code == 200 and again.json()["duplicate_of"] == later.json()["id"]


# --- 4. compression loses no fact --------------------------------------------------------

TOPIC = unit(42)


def _vendors(owner, n=24):
    return [
        services.memory_create(
            owner=owner,
            content=f"Vendor V0{i:02d} signed the supply contract on 2026-03-{i + 1:02d} for {1000 + 37 * i} USD",
            embedding=at_cosine(TOPIC, 0.9, seed=500 + i),
        )[0]
        for i in range(n)
    ]


def _said_somewhere(ids: list[str]) -> set[str]:
    texts = " ".join(Memory.objects.filter(status="active").values_list("content", flat=True))
    return {i for i in ids if i in texts}


def _age(pks):
    Memory.objects.filter(pk__in=pks).update(
        updated_at=timezone.now() - timedelta(days=conf.COMPRESSED_KEEP_DAYS + 1)
    )


def test_compressing_a_large_topic_keeps_every_fact_after_the_keep_period(alice):
    originals = _vendors(alice)
    ids = [f"V0{i:02d}" for i in range(24)]
    assert memory_compress_task()["summaries"] >= 1
    summaries = " ".join(Memory.objects.filter(meta__source="compression").values_list("content", flat=True))
    assert all(i in summaries for i in ids)
    _age([m.pk for m in originals])
    memory_compress_task()
    assert _said_somewhere(ids) == set(ids)
    assert all(f"{1000 + 37 * i} USD" in summaries for i in range(24))


def test_a_topic_larger_than_one_summary_is_split(alice, monkeypatch):
    monkeypatch.setattr(conf, "COMPRESS_MAX_TOKENS", 250)
    originals = _vendors(alice)
    assert memory_compress_task()["summaries"] >= 2
    summaries = Memory.objects.filter(meta__source="compression")
    assert all(len(s.meta["compressed_from"]) > 1 for s in summaries)
    assert not Memory.objects.filter(pk__in=[m.pk for m in originals], status="active").exists()
    assert _said_somewhere([f"V0{i:02d}" for i in range(24)]) == {f"V0{i:02d}" for i in range(24)}


def test_originals_the_summary_leaves_out_stay_active(alice, monkeypatch):
    originals = _vendors(alice)

    def forgetful(*, name, input, **kw):  # an LLM that keeps only the first ten
        return {"summary": "\n".join(input["items"][:10])}

    monkeypatch.setattr(compression, "skill_run", forgetful)
    assert memory_compress_task()["summaries"] == 1
    summary = Memory.objects.get(meta__source="compression")
    status = dict(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("pk", "status"))
    assert [status[m.pk] for m in originals] == ["compressed"] * 10 + ["active"] * 14
    assert MemoryLink.objects.filter(target=summary).count() == 10


def test_expiry_keeps_originals_a_rewritten_summary_no_longer_says(alice):
    originals = _vendors(alice)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    # The summary no longer names V020-V023 (an LLM rewrite, an admin edit).
    lines = [line for line in summary.content.splitlines() if not any(f"V02{i}" in line for i in range(4))]
    Memory.objects.filter(pk=summary.pk).update(content="\n".join(lines))
    _age([m.pk for m in originals])
    assert memory_compress_task()["expired"] == 20
    kept = Memory.objects.filter(pk__in=[m.pk for m in originals])
    assert sorted(kept.values_list("status", flat=True)) == ["active"] * 4
    assert not MemoryLink.objects.filter(source__in=kept).exists()
    assert _said_somewhere([f"V0{i:02d}" for i in range(24)]) == {f"V0{i:02d}" for i in range(24)}


# --- 5. PATCH cannot set `compressed`; expiry needs a summary ----------------------------


def test_patch_refuses_status_compressed(api, alice):
    memory = _post(api, "Apollo ships on Fridays").json()
    response = api.patch(f"/memories/{memory['id']}", {"user": "alice", "status": "compressed"})
    assert response.status_code == 422 and "compression" in response.content.decode()
    assert Memory.objects.get(pk=memory["id"]).status == "active"


def test_an_unlinked_compressed_memory_is_not_deleted(alice, remember):
    memory = remember(alice, "Apollo ships on Fridays")
    Memory.objects.filter(pk=memory.pk).update(
        status="compressed", updated_at=timezone.now() - timedelta(days=conf.COMPRESSED_KEEP_DAYS + 1)
    )
    assert memory_compress_task()["expired"] == 0
    assert Memory.objects.get(pk=memory.pk).status == "active"


def test_patching_a_compressed_original_active_unlinks_it(api, alice):
    originals = _vendors(alice)
    memory_compress_task()
    response = api.patch(f"/memories/{originals[0].pk}", {"user": "alice", "status": "active"})
    assert response.status_code == 200 and response.json()["status"] == "active"
    assert not MemoryLink.objects.filter(source_id=originals[0].pk).exists()


# --- 6. `user` as a query parameter on body endpoints ------------------------------------


def test_user_may_be_a_query_parameter_on_body_endpoints(api, alice, bob):
    memory = _post(api, "Alice prefers aisle seats on long flights").json()
    response = api.patch(f"/memories/{memory['id']}?user=alice", {"importance": 0.9})
    assert response.status_code == 200 and response.json()["importance"] == 0.9
    assert api.post("/memories/search?user=alice", {"query": "aisle seats"}).status_code == 200
    feedback = api.post(f"/memories/{memory['id']}/feedback?user=alice", {"signal": "adopted"})
    assert feedback.status_code == 200
    # The body's `user` wins (bob may not see alice's memory); unknown: 404; none: 422.
    assert (
        api.patch(f"/memories/{memory['id']}?user=alice", {"user": "bob", "importance": 0.1}).status_code
        == 404
    )
    assert api.patch(f"/memories/{memory['id']}?user=nobody", {"importance": 0.1}).status_code == 404
    assert api.patch(f"/memories/{memory['id']}", {"importance": 0.1}).status_code == 422


def test_session_turns_take_user_from_the_query(api, alice):
    session = api.post("/sessions", {"user": "alice"}).json()
    assert (
        api.post(f"/sessions/{session['id']}/turns?user=alice", {"role": "user", "content": "hi"}).status_code
        == 201
    )
    assert (
        api.post(f"/sessions/{session['id']}/turns?user=bob", {"role": "user", "content": "hi"}).status_code
        == 404
    )


# --- 7. long JSON-object tool outputs -----------------------------------------------------


def test_tool_output_object_keeps_the_first_items_of_its_longest_list():
    rows = {"total": 120, "results": [{"id": i} for i in range(120)], "tags": ["a", "b"]}
    kept, more = tool_output_truncate(json.dumps(rows, indent=2)).rsplit("\n", 1)
    data = json.loads(kept)
    assert len(data["results"]) == 50 and data["results"][-1] == {"id": 49}
    assert data["total"] == 120 and data["tags"] == ["a", "b"] and more == "… and 70 more"


def test_tool_output_nested_object_and_chinese():
    rows = {"data": {"订单": [f"订单 {i}" for i in range(80)]}, "状态": "成功"}
    kept, more = tool_output_truncate(json.dumps(rows, ensure_ascii=False)).rsplit("\n", 1)
    assert json.loads(kept)["data"]["订单"][-1] == "订单 49" and more == "…等 30 条"


def test_tool_output_object_with_many_keys_and_short_objects():
    many = {f"k{i}": i for i in range(70)}
    kept, more = tool_output_truncate(json.dumps(many)).rsplit("\n", 1)
    assert list(json.loads(kept)) == [f"k{i}" for i in range(50)] and more == "… and 20 more"
    short = json.dumps({"results": list(range(10))}, indent=2)
    assert tool_output_truncate(short) == short
