"""Shared by the web UI tests: a tenant's wiki built from a private and a public Slack message,
and a signed-in client."""

import pytest

from connectors.services.ingest import event_ingest
from memories.services.memories import memory_create

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def private_event(**over):
    event = {
        "source": "slack",
        "external_id": "CFIN/1700000000.000100",
        "version": 1,
        "kind": "message",
        "occurred_at": "2026-11-30T10:00:00Z",
        "container": {
            "key": "slack:channel:CFIN",
            "name": "#finance-internal",
            "members": ["bob@acme.com"],
            "public": False,
        },
        "thread_key": "slack:thread:CFIN/1700000000.000100",
        "author": "bob@acme.com",
        "text": "Vercel renewal: discount ceiling is 18%, approved by the CFO.",
        "tags": {"customer": "Vercel"},
    }
    event.update(over)
    return event


def public_event():
    return private_event(
        external_id="CGEN/1700000001.000100",
        container={"key": "slack:channel:CGEN", "name": "#general", "members": [], "public": True},
        thread_key="slack:thread:CGEN/1700000001.000100",
        text="Vercel kickoff call is on Friday with the platform team.",
    )


def login(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def wiki(tenant, alice, bob, charlie, django_capture_on_commit_callbacks):
    # ingest enqueues the compiler on commit; tasks run inline in tests
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(tenant=tenant, payload=private_event())
        event_ingest(tenant=tenant, payload=public_event())


@pytest.fixture
def five_memories(alice, monkeypatch):
    monkeypatch.setattr("web.views.memories.PER_PAGE", 2)
    topics = ["pricing tiers", "legal review", "security questionnaire", "invoice dates", "kickoff agenda"]
    for topic in topics:
        memory_create(owner=alice, content=f"Renewal checklist: {topic}", memory_type="semantic")
