"""Concurrent workers are serialized per thread (advisory lock) and per page (row lock)."""

import pytest

from connectors.models import Event
from connectors.services.ingest import event_ingest
from tests.locking import while_locked
from tests.wiki.conftest import slack
from wiki.models import Page, PageSection
from wiki.services import compiler
from wiki.services.compiler import compile_event


@pytest.mark.django_db(transaction=True)
def test_a_second_worker_waits_for_the_thread_and_sees_the_first_ones_write(tenant, alice, monkeypatch):
    monkeypatch.setattr("wiki.receivers.inbox_drain_enqueue", lambda tenant_id: None)
    root = event_ingest(
        tenant=tenant, payload=slack("Vercel wants SSO", tags={"customer": "Vercel"}, ts="1700000000.000100")
    )[0]
    reply = event_ingest(
        tenant=tenant,
        payload=slack("and SCIM", thread="1700000000.000100", ts="1700000001.000100", minutes=1),
    )[0]
    first_compiled = []
    outcome = while_locked(
        lambda: compiler.threads_lock([(tenant.pk, "slack:thread:C100/1700000000.000100")]),
        lambda: compile_event(reply.pk),
        then=lambda: first_compiled.append(compile_event(root.pk)),
    )
    assert first_compiled == ["compiled"] and outcome == {"value": "compiled"}
    section = PageSection.objects.get(page=Page.objects.get(slug="vercel"))
    assert "SSO" in section.content and "SCIM" in section.content
    assert not Event.objects.exclude(state="compiled").exists()
