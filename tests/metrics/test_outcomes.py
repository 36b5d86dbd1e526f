"""Outcome metrics from a scripted scenario through the API (docs/operations.md, "Metrics"):
a repeated question counted once, an adopted memory counted, a corrected one not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory
from metrics import recorder
from metrics.models import ContextCall, DailyFigure
from metrics.rollup import rollup

pytestmark = pytest.mark.django_db

FACTS = {
    "price": "Acme renewal price is 120k USD per year",
    "contact": "Acme renewal contact is Dana Smith in procurement",
    "currency": "Acme renewal invoices are paid in EUR",
}


def figures(tenant, name) -> dict:
    rows = DailyFigure.objects.filter(tenant=tenant, day=timezone.localdate(), name=name)
    return {row.key: row.value for row in rows}


def day_figure(tenant, name, key="") -> float:
    row = DailyFigure.objects.filter(tenant=tenant, day=timezone.localdate(), name=name, key=key).first()
    return row.value if row else 0.0


def context(api, task, **body):
    response = api.post("/context", {"user": "alice", "task": task, "max_tokens": 3000, **body})
    assert response.status_code == 200, response.content
    return response.json()


def session(api) -> int:
    response = api.post("/sessions", {"user": "alice"})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def say(api, session_id, content, role="assistant"):
    response = api.post(f"/sessions/{session_id}/turns", {"user": "alice", "role": role, "content": content})
    assert response.status_code == 201, response.content


@pytest.fixture
def facts(api, alice):
    ids = {}
    for name, content in FACTS.items():
        response = api.post("/memories", {"user": "alice", "content": content})
        assert response.status_code in (200, 201), response.content
        ids[name] = response.json()["id"]
    return ids


def test_adopted_memories_count_and_a_corrected_one_does_not(api, tenant, alice, facts):
    first = session(api)
    context(api, "Prepare the Acme renewal: price, contact and invoices", session_id=first)
    recorder.flush()
    call = ContextCall.objects.get()
    assert set(facts.values()) <= set(call.memory_ids), "the scenario needs all three facts returned"
    # The agent quotes the price and the currency back; the user confirms the contact.
    say(api, first, "Per our notes, the Acme renewal price is 120k USD per year, invoices paid in EUR.")
    assert (
        api.post(f"/memories/{facts['contact']}/feedback", {"user": "alice", "signal": "adopted"}).status_code
        == 200
    )
    # The currency was wrong: corrected soon after, so it does not count as adopted.
    patched = api.patch(
        f"/memories/{facts['currency']}", {"user": "alice", "content": "Acme pays invoices in USD"}
    )
    assert patched.status_code == 200, patched.content

    rollup()

    call.refresh_from_db()
    assert sorted(call.adopted_memory_ids) == sorted([facts["price"], facts["contact"]])
    assert day_figure(tenant, "memories_returned") == len(call.memory_ids)
    assert day_figure(tenant, "memories_adopted") == 2
    assert day_figure(tenant, "context_calls", "api") == 1


def test_adoption_after_the_window_does_not_count(api, tenant, alice, facts, settings):
    context(api, "Acme renewal price", session_id=session(api))
    recorder.flush()
    call = ContextCall.objects.get()
    assert facts["contact"] in call.memory_ids
    ContextCall.objects.filter(pk=call.pk).update(
        at=timezone.now() - timedelta(days=settings.METRICS_ADOPTION_DAYS + 1)
    )
    api.post(f"/memories/{facts['contact']}/feedback", {"user": "alice", "signal": "adopted"})
    rollup()
    call.refresh_from_db()
    assert call.adopted_memory_ids == []


def test_a_repeated_question_is_counted_once(api, tenant, alice, bob, facts):
    task = "What is the Acme renewal price?"
    first = session(api)
    reply = context(api, task, session_id=first, max_tokens=60)
    context(api, task, session_id=first)  # the same question again in its session: one question
    if reply["next_cursor"]:
        context(api, task, session_id=first, cursor=reply["next_cursor"])  # its next pass: no question
    context(api, "what is the ACME renewal price", session_id=session(api))  # another session: a repeat
    context(api, "Who handles Acme procurement?", session_id=session(api))  # another question
    bob_reply = api.post("/context", {"user": "bob", "task": task, "max_tokens": 500})  # another user
    assert bob_reply.status_code == 200
    recorder.flush()

    rollup()

    assert day_figure(tenant, "questions") == 4  # alice's three distinct asks + bob's
    assert day_figure(tenant, "repeated_questions") == 1
    repeat = ContextCall.objects.get(repeat_of__isnull=False)
    assert repeat.task == "what is the acme renewal price"
    assert repeat.repeat_of.session_id == first
    rollup()  # judging again changes nothing
    assert day_figure(tenant, "repeated_questions") == 1


def test_repeats_older_than_the_window_are_new_questions(api, tenant, alice, facts, settings):
    context(api, "What is the Acme renewal price?")
    recorder.flush()
    ContextCall.objects.update(at=timezone.now() - timedelta(days=settings.METRICS_REPEAT_DAYS + 1))
    context(api, "What is the Acme renewal price?")
    recorder.flush()
    rollup()
    assert ContextCall.objects.exclude(repeat_of=None).count() == 0


def test_growth_lifecycle_and_preview_calls(api, client, tenant, alice, facts):
    api.delete(f"/memories/{facts['currency']}", user="alice", purge="true")
    client.force_login(alice)
    assert client.get("/context/", {"task": "Acme renewal price"}).status_code == 200
    recorder.flush()

    rollup()

    held = figures(tenant, "memories")
    assert sum(held.values()) == Memory.objects.filter(tenant=tenant).count() == 2
    assert day_figure(tenant, "memory_lifecycle", "purge") == 1
    preview = ContextCall.objects.get()
    assert preview.via == ContextCall.Via.PREVIEW and preview.agent_key_id is None
    assert day_figure(tenant, "context_calls", "preview") == 1
    assert day_figure(tenant, "questions") == 0  # the preview is nobody's question


def test_a_session_deleted_before_the_flush_keeps_the_record(api, tenant, alice, facts):
    from memories.models import ConversationSession

    first = session(api)
    context(api, "Acme renewal price", session_id=first)
    ConversationSession.objects.filter(pk=first).delete()
    assert recorder.flush() == 1
    assert ContextCall.objects.get().session_id is None
