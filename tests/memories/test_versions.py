"""Versioned rows: a v1 (or v0) row is served as v2 on every read, and the background job
rewrites it; `kind` is set on write, filterable, and filled for old rows."""

from datetime import date
from unittest import mock

import pytest

from memories import tasks
from memories.models import Memory
from memories.selectors import memory_search
from memories.tasks import SCHEDULES, memory_upgrade_task

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]


def _as_v1(memory: Memory, **fields) -> None:
    """The row as the code before version 2 left it: no key, the migration's kind."""
    values = {"schema_version": 1, "kind": "fact", "fact_key": "", **fields}
    Memory.objects.filter(pk=memory.pk).update(**values)


def _stored(memory: Memory) -> dict:
    return (
        Memory.objects.filter(pk=memory.pk).values("schema_version", "kind", "fact_key", "updated_at").get()
    )


@pytest.mark.parametrize("version", [0, 1])
def test_an_old_row_is_served_as_v2(api, alice, remember, version):
    memory = remember(alice, "以后报销都走电子流程")
    _as_v1(memory, schema_version=version)
    body = api.get(f"/memories/{memory.pk}", user="alice").json()
    assert body["schema_version"] == 2 and body["kind"] == "preference" and body["key"] == "报销 ·rule"
    assert _stored(memory)["schema_version"] == version  # a read writes nothing
    listed = api.get("/memories", user="alice").json()["items"]
    assert listed[0]["schema_version"] == 2 and listed[0]["kind"] == "preference"
    hit = memory_search(user=alice, query="报销流程")[0].memory
    assert hit.pk == memory.pk and hit.schema_version == 2 and hit.kind == "preference"


def test_the_job_upgrades_old_rows_and_is_idempotent(alice, remember):
    memory = remember(alice, "The Vercel renewal budget is $30k")
    _as_v1(memory)
    before = _stored(memory)
    assert memory_upgrade_task() == 1
    after = _stored(memory)
    assert after["schema_version"] == 2 and after["fact_key"] == "budget renew vercel"
    assert after["updated_at"] == before["updated_at"]  # not a change of the fact: recency unmoved
    assert memory_upgrade_task() == 0
    assert Memory.history.filter(id=memory.pk).first().history_change_reason == "job:schema-upgrade"


def test_the_job_works_in_batches(alice, remember):
    memories = [remember(alice, f"Batch fact {word} for the upgrade") for word in ("alpha", "beta", "gamma")]
    for memory in memories:
        _as_v1(memory)
    with mock.patch("memories.tasks.memory_upgrade_rows", wraps=tasks.memory_upgrade_rows) as rows:
        assert memory_upgrade_task(batch=2) == 3
    assert rows.call_count == 2
    assert not Memory.objects.filter(schema_version__lt=2).exists()


def test_the_job_is_scheduled():
    assert any(s["func"] == "memories.tasks.memory_upgrade_task" for s in SCHEDULES)


def test_an_upgraded_old_row_is_superseded_by_a_newer_value(alice, remember):
    old = remember(alice, "客户C合同金额30万元")
    _as_v1(old)
    new = remember(alice, "客户C合同金额调整为50万元")
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("以后报销都走电子流程", "preference"),
        ("From now on, always send invoices as PDF", "preference"),
        ("I prefer window seats", "preference"),
        ("我们决定下季度迁移到腾讯云", "decision"),
        ("合同第5条规定违约金为合同金额的10%", "clause"),
        ("客户C合同金额30万元", "fact"),
    ],
)
def test_kind_is_read_from_the_text(alice, remember, text, kind):
    assert remember(alice, text).kind == kind


def test_kind_given_wins_and_events_and_summaries(alice, remember):
    assert remember(alice, "Alice likes green tea", kind="fact").kind == "fact"
    assert remember(alice, "Met Dave", memory_type="episodic", occurred_at=date(2026, 3, 1)).kind == "event"
    assert remember(alice, "Use the blue template", meta={"fact_type": "preference"}).kind == "preference"


def test_list_filters_by_kind(api, alice, remember):
    preference = remember(alice, "以后报销都走电子流程")
    remember(alice, "客户C合同金额30万元")
    body = api.get("/memories", user="alice", kind="preference").json()
    assert [m["id"] for m in body["items"]] == [preference.pk] and body["count"] == 1
    assert api.get("/memories", user="alice", kind="gossip").status_code == 422


def test_api_kind_on_write_and_patch(api, alice):
    created = api.post(
        "/memories", {"user": "alice", "content": "Board approved the hiring plan", "kind": "decision"}
    )
    assert created.status_code == 201 and created.json()["kind"] == "decision"
    assert (
        api.post("/memories", {"user": "alice", "content": "x y z words", "kind": "rumour"}).status_code
        == 422
    )
    patched = api.patch(f"/memories/{created.json()['id']}", {"user": "alice", "kind": "fact"})
    assert patched.status_code == 200 and patched.json()["kind"] == "fact"
