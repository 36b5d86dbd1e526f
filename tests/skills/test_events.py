"""Domain events that carry what happened (docs/llm.md, Events): each payload, sent by the
real services and API; delivery after the commit, once per (event, skill, version); a skill
that keeps its output in another scope gets only what that scope may read."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.utils import timezone

from memories.models import Memory
from memories.services import touches
from memories.services.memories import memory_create
from skills import bus
from skills.models import Skill, SkillRun
from skills.signals import domain_event
from skills.tasks import skill_event_task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _offline(settings):
    settings.LLM_BASE_URL = ""


@pytest.fixture
def announced():
    """(event, payload) of every domain event sent, in order."""
    seen = []

    def record(sender, *, event, payload, **kwargs):
        seen.append((event, payload))

    domain_event.connect(record, dispatch_uid="tests.skills.events.announced")
    yield seen
    domain_event.disconnect(dispatch_uid="tests.skills.events.announced")


def _payloads(announced, event: str) -> list[dict]:
    return [payload for name, payload in announced if name == event]


def _runs(skill: str) -> list[SkillRun]:
    return list(SkillRun.objects.filter(skill_name=skill).order_by("id"))


# --- What each event carries ------------------------------------------------------------


def test_memory_created_carries_the_text_the_user_and_the_readers(api, alice, announced):
    response = api.post(
        "/memories", {"user": "alice", "content": "Acme renews on 2027-03-01", "scope": "dept"}
    )
    assert response.status_code == 201, response.content
    memory = Memory.objects.get(pk=response.json()["id"])
    [payload] = _payloads(announced, "memory.created")
    assert payload["event_id"] == f"memory:{memory.pk}"
    assert (payload["memory_id"], payload["text"], payload["text_truncated"]) == (
        memory.pk,
        "Acme renews on 2027-03-01",
        False,
    )
    assert (payload["user_id"], payload["user"], payload["owner_id"]) == (alice.pk, "alice", alice.pk)
    assert (payload["scope"], payload["scope_key"], payload["acl"]) == ("dept", memory.scope_key, memory.acl)
    assert payload["readers"] == f"the members of department {memory.scope_key}"


def test_a_long_text_is_cut_and_says_so(alice, announced, settings):
    settings.EVENT_TEXT_CHARS = 12
    memory_create(owner=alice, content="Apollo ships on Friday after the review")
    [payload] = _payloads(announced, "memory.created")
    assert (payload["text"], payload["text_truncated"]) == ("Apollo ships", True)


def test_session_ended_carries_its_turns(api, alice, announced, django_capture_on_commit_callbacks):
    session = api.post("/sessions", {"user": "alice"}).json()
    api.post(
        f"/sessions/{session['id']}/turns",
        {"user": "alice", "role": "user", "content": "Apollo ships Friday"},
    )
    api.post(f"/sessions/{session['id']}/turns", {"user": "alice", "role": "assistant", "content": "Noted."})
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(f"/sessions/{session['id']}/end", {"user": "alice"}).status_code == 202
    [payload] = _payloads(announced, "session.ended")
    assert payload["event_id"] == f"session:{session['id']}"
    assert payload["text"] == "user: Apollo ships Friday\nassistant: Noted."
    assert (payload["user_id"], payload["user"], payload["turn_count"]) == (alice.pk, "alice", 2)
    assert (payload["scope"], payload["scope_key"], payload["acl"], payload["readers"]) == (
        "user",
        "alice",
        ["user:alice"],
        "only alice",
    )


def test_memory_superseded_carries_the_new_and_the_old_text(alice, announced):
    old, _ = memory_create(owner=alice, content="The Vercel renewal budget is $30k")
    new, _ = memory_create(owner=alice, content="Actually, the Vercel renewal budget is $50k")
    [payload] = _payloads(announced, "memory.superseded")
    assert (payload["memory_id"], payload["text"]) == (new.pk, new.content)
    assert [(m["memory_id"], m["text"]) for m in payload["superseded"]] == [(old.pk, old.content)]
    assert (payload["user"], payload["acl"]) == ("alice", ["user:alice"])


def test_memory_hot_once_after_n_recalls_in_a_window(
    api, alice, announced, settings, django_capture_on_commit_callbacks
):
    settings.MEMORY_TOUCH_MODE = "task"  # tests run queued tasks synchronously, after each request
    settings.MEMORY_HOT_RECALLS = 3
    memory, _ = memory_create(owner=alice, content="我喜欢喝美式咖啡，不加糖。")

    def recall():
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post("/memories/search", {"user": "alice", "query": "美式咖啡", "top_k": 1})
        assert [hit["memory"]["id"] for hit in response.json()["results"]] == [memory.pk]

    recall(), recall()
    assert _payloads(announced, "memory.hot") == []
    recall()
    [hot] = _payloads(announced, "memory.hot")
    assert (hot["memory_id"], hot["recalls"], hot["text"], hot["acl"]) == (
        memory.pk,
        3,
        memory.content,
        ["user:alice"],
    )
    recall(), recall(), recall()
    assert len(_payloads(announced, "memory.hot")) == 1  # once per window
    later = timezone.now() + timedelta(seconds=settings.MEMORY_HOT_WINDOW_SECONDS)
    for _ in range(3):
        touches.memory_touch(memory_ids=[memory.pk], at=later)
    again = _payloads(announced, "memory.hot")
    assert len(again) == 2 and again[1]["window_start"] > hot["window_start"]
    assert again[1]["event_id"] != hot["event_id"]


def test_document_uploaded_carries_its_text_and_scope(
    api, alice, announced, django_capture_on_commit_callbacks
):
    text = b"# Service agreement\n\nThe term is twelve months from 1 March 2027.\n"
    with django_capture_on_commit_callbacks(execute=True):
        response = api.client.post(
            "/api/v1/documents",
            {"file": SimpleUploadedFile("terms.md", text), "user": "alice", "scope": "user"},
            headers=api.headers,
        )
    assert response.status_code == 202, response.content
    [payload] = _payloads(announced, "document.uploaded")
    assert payload["document_id"] == response.json()["id"]
    assert payload["event_id"] == f"document:{payload['document_id']}:{payload['sha256']}"
    assert "twelve months from 1 March 2027" in payload["text"] and not payload["text_truncated"]
    assert (payload["user"], payload["user_id"], payload["scope"], payload["acl"]) == (
        "alice",
        alice.pk,
        "user",
        ["user:alice"],
    )


# --- Delivery: after the commit, once per (event, skill, version) -------------------------


def test_nothing_before_the_commit_and_nothing_after_a_rollback(
    alice, skill_subscribed, django_capture_on_commit_callbacks
):
    ran = skill_subscribed("memory.created")
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        memory_create(owner=alice, content="Alice drinks green tea")
        assert ran == [] and not SkillRun.objects.exists()  # not before the commit
        raise RuntimeError("the request failed after the write")
    assert callbacks == [] and ran == [] and not SkillRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        memory, _ = memory_create(owner=alice, content="Alice drinks green tea")
    assert [p["memory_id"] for p in ran] == [memory.pk] and len(_runs("summarize")) == 1


def test_the_same_event_twice_runs_a_skill_once(
    alice, announced, skill_subscribed, django_capture_on_commit_callbacks
):
    ran = skill_subscribed("memory.created")
    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=alice, content="Apollo deploys on Tuesdays")
    [payload] = _payloads(announced, "memory.created")
    with django_capture_on_commit_callbacks(execute=True):  # the sender announces it again
        first = bus.publish("memory.created", payload, tenant_id=alice.profile.tenant_id)
        again = bus.publish("memory.created", dict(payload), tenant_id=alice.profile.tenant_id)
    assert first == again
    [run] = _runs("summarize")
    assert run.event_key == first[0]
    skill_event_task("summarize", "memory.created", payload, None, run.event_key)  # a retried task
    assert len(_runs("summarize")) == 1 and len(ran) == 4  # on_output again, the skill not again


def test_a_new_version_of_a_skill_is_a_new_delivery(alice, announced):
    Skill.objects.create(name="tagger", prompt="Tag {text}", events=["memory.created"])
    memory_create(owner=alice, content="Apollo deploys on Tuesdays")
    [payload] = _payloads(announced, "memory.created")
    before = bus.publish("memory.created", payload)
    Skill.objects.filter(name="tagger").update(version="2")
    assert bus.publish("memory.created", payload) != before


def test_a_failed_run_is_not_run_again_on_redelivery(alice, announced, django_capture_on_commit_callbacks):
    Skill.objects.create(name="tagger", prompt="Tag {text}", events=["memory.created"])
    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=alice, content="Apollo deploys on Tuesdays")
        [payload] = _payloads(announced, "memory.created")
        bus.publish("memory.created", payload)
    [run] = _runs("tagger")  # no LLM: a prompt-only skill fails, recorded once
    assert run.status == "failed"


# --- Who a run is for ---------------------------------------------------------------------


@pytest.fixture
def scoped_skills(alice):
    """Prompt skills on memory.created keeping their output with the event, in alice's
    department, in the whole tenant."""
    for name, scope in (("own_notes", ""), ("sales_notes", "dept:sales"), ("team_notes", "tenant")):
        Skill.objects.create(
            name=name,
            prompt="Note {text}",
            events=["memory.created"],
            output_to="memory",
            output_field="note",
            output_scope=scope,
        )


def _quoted_by(text: str) -> set[str]:
    return {run.skill_name for run in SkillRun.objects.all() if text in str(run.input)}


def test_a_private_memory_reaches_no_skill_of_another_scope(
    api, alice, scoped_skills, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/memories", {"user": "alice", "content": "My salary review is in June", "scope": "user"})
    assert {run.skill_name for run in SkillRun.objects.all()} == {"own_notes"}
    assert _quoted_by("salary review") == {"own_notes"}


def test_a_department_memory_reaches_its_department_and_not_the_tenant(
    api, alice, scoped_skills, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/memories", {"user": "alice", "content": "Sales targets rise 10%", "scope": "dept"}
        )
    assert response.json()["scope_key"] == "sales"
    assert _quoted_by("Sales targets") == {"own_notes", "sales_notes"}


def test_a_tenant_memory_reaches_every_scope(api, alice, scoped_skills, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/memories", {"user": "alice", "content": "The office closes on May 1", "scope": "tenant"})
    assert _quoted_by("office closes") == {"own_notes", "sales_notes", "team_notes"}
