"""Domain events memories announce (`skills.signals.domain_event`): `memory.created` for every
memory written, whatever the path, and `session.ended`; subscribed skills run after the
commit, never for a rolled-back write."""

import pytest
from django.db import transaction

from memories.models import Memory
from memories.services.compression import memories_compress
from memories.services.extraction import session_extract
from memories.services.memories import memory_create
from memories.services.sessions import session_create, session_end, turn_add
from skills.models import Skill, SkillRun
from skills.signals import domain_event
from tests.memories.conftest import FILLER, on_topic

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]


@pytest.fixture
def announced():
    """(event, payload, tenant id) of every domain event sent."""
    seen = []

    def record(sender, *, event, payload, tenant_id=None, **kwargs):
        seen.append((event, payload, tenant_id))

    domain_event.connect(record, dispatch_uid="tests.memories.announced")
    yield seen
    domain_event.disconnect(dispatch_uid="tests.memories.announced")


@pytest.fixture
def summarized(skill_subscribed):
    """The `summarize` skill subscribed to both events: the payloads it ran for."""
    return skill_subscribed("memory.created", "session.ended")


def test_a_written_memory_runs_a_subscribed_skill_after_commit(
    alice, summarized, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        memory, _ = memory_create(owner=alice, content="Alice drinks green tea", scope="user")
    assert summarized == [] and not SkillRun.objects.exists()  # nothing before the commit
    for callback in callbacks:
        callback()
    assert summarized == [
        {
            "event_id": f"memory:{memory.pk}",
            "memory_id": memory.pk,
            "memory_type": "semantic",
            "kind": memory.kind,
            "text": "Alice drinks green tea",
            "text_truncated": False,
            "occurred_at": None,
            "owner_id": alice.pk,
            "user_id": alice.pk,
            "user": "alice",
            "scope": "user",
            "scope_key": "alice",
            "acl": ["user:alice"],
            "readers": "only alice",
            "reason": "api",
        }
    ]
    run = SkillRun.objects.get()
    assert (run.trigger, run.tenant_id) == ("event:memory.created", alice.profile.tenant_id)


def test_an_admin_defined_skill_subscribed_to_memory_created_runs(
    api, alice, django_capture_on_commit_callbacks
):
    Skill.objects.create(name="tag_memory", prompt="Tag {memory_id}", events=["memory.created"])
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/memories", {"user": "alice", "content": "Acme renews in May"}).status_code == 201
    run = SkillRun.objects.get()  # no LLM configured: a prompt-only skill fails, recorded
    assert (run.skill_name, run.trigger) == ("tag_memory", "event:memory.created")


def test_a_rolled_back_write_runs_nothing(alice, summarized, django_capture_on_commit_callbacks):
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        memory_create(owner=alice, content="Alice drinks green tea")
        raise RuntimeError("the request failed after the write")
    assert callbacks == [] and summarized == [] and not SkillRun.objects.exists()


def test_a_duplicate_is_not_announced(alice, announced):
    memory_create(owner=alice, content="Apollo deploys on Tuesdays")
    _, duplicate = memory_create(owner=alice, content="Apollo deploys on Tuesdays")
    assert duplicate is not None
    assert [event for event, *_ in announced] == ["memory.created"]


def test_a_compression_summary_is_announced(alice, announced):
    on_topic(alice, FILLER)
    announced.clear()
    assert memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    [created] = [payload for event, payload, _ in announced if event == "memory.created"]
    assert (created["memory_id"], created["kind"], created["reason"]) == (
        summary.pk,
        "summary",
        "job:compress",
    )
    assert (created["owner_id"], created["scope"], created["scope_key"]) == (alice.pk, "user", "alice")
    assert created["text"] == summary.content[: len(created["text"])] and created["text"]


def test_memories_extracted_from_a_session_are_announced(alice, ended_session, announced):
    session = ended_session(alice, ["我对花生过敏。", "我下周三去杭州出差。"])
    announced.clear()
    session_extract(session_id=session.pk)
    created = [payload for event, payload, _ in announced if event == "memory.created"]
    assert created and all(p["reason"] == f"session:{session.pk}" for p in created)
    assert {p["memory_id"] for p in created} == set(
        Memory.objects.filter(meta__session_id=session.pk).values_list("pk", flat=True)
    )


def test_ending_a_session_is_announced_once(alice, summarized, announced, django_capture_on_commit_callbacks):
    session = session_create(user=alice, title="standup")
    turn_add(session=session, role="user", content="Apollo ships Friday")
    with django_capture_on_commit_callbacks(execute=True):
        session_end(session=session)
        session_end(session=session)  # ending again announces nothing
    ended = [(payload, tenant_id) for event, payload, tenant_id in announced if event == "session.ended"]
    session.refresh_from_db()
    assert [(p["session_id"], p["user_id"], p["turn_count"], p["ended_at"], t) for p, t in ended] == [
        (session.pk, alice.pk, 1, session.ended_at.isoformat(), alice.profile.tenant_id)
    ]
    assert ended[0][0]["text"] == "user: Apollo ships Friday"
    assert [p["session_id"] for p in summarized] == [session.pk]
    assert SkillRun.objects.filter(trigger="event:session.ended", skill_name="summarize").count() == 1
