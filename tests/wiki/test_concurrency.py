"""Concurrent workers are serialized per thread (advisory lock) and per page (row lock)."""

import threading

import pytest
from django.db import connection, connections, transaction

import connectors.services as connector_services
from connectors.models import Event
from tests.wiki.conftest import slack
from wiki import services
from wiki.models import Page, PageSection
from wiki.services import compiler


def _waiting_on_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype IN ('advisory', 'tuple', 'transactionid')"
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_a_second_worker_waits_for_the_thread_and_sees_the_first_ones_write(tenant, alice, monkeypatch):
    monkeypatch.setattr(connector_services, "async_task", lambda *a, **k: None)
    root = connector_services.event_ingest(
        tenant=tenant, payload=slack("Vercel wants SSO", tags={"customer": "Vercel"}, ts="1700000000.000100")
    )[0]
    reply = connector_services.event_ingest(
        tenant=tenant,
        payload=slack("and SCIM", thread="1700000000.000100", ts="1700000001.000100", minutes=1),
    )[0]
    result = {}

    def worker():
        try:
            result["state"] = services.compile_event(reply.pk)
        finally:
            connections.close_all()

    with transaction.atomic():
        compiler._lock_thread(tenant.pk, "slack:thread:C100/1700000000.000100")
        thread = threading.Thread(target=worker)
        thread.start()
        for _ in range(2000):
            if _waiting_on_lock():
                break
            threading.Event().wait(0.005)
        else:
            pytest.fail("the second worker never waited for the thread lock")
        assert services.compile_event(root.pk) == "compiled"
    thread.join(30)
    assert result["state"] == "compiled"
    section = PageSection.objects.get(page=Page.objects.get(slug="vercel"))
    assert "SSO" in section.content and "SCIM" in section.content
    assert not Event.objects.exclude(state="compiled").exists()
