import threading
import time

import pytest
from django.db import connection, connections, transaction

from connectors import services
from connectors.models import Event
from tests.connectors.conftest import make_event


def _lock_waiters() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_concurrent_push_of_the_same_event_stores_it_once(tenant, alice):
    """B's batch misses A's uncommitted row, blocks on the unique index, fails when A commits,
    and is retried: it must then count a duplicate, not fail and not store twice."""
    payload = make_event(source="crm", container={"key": "crm:account:1", "members": ["alice@acme.com"]})
    a_ready, a_release, results = threading.Event(), threading.Event(), {}

    def writer_a():
        try:
            with transaction.atomic():
                services.event_ingest(tenant=tenant, payload=payload)
                a_ready.set()
                a_release.wait(10)
        finally:
            connections.close_all()

    def writer_b():
        try:
            results["b"] = services.event_ingest_batch(tenant=tenant, payloads=[payload])
        finally:
            connections.close_all()

    a = threading.Thread(target=writer_a)
    a.start()
    assert a_ready.wait(10)
    b = threading.Thread(target=writer_b)
    b.start()
    for _ in range(200):  # until B waits on A's row lock (or gives up waiting for it)
        if _lock_waiters():
            break
        time.sleep(0.05)
    a_release.set()
    a.join(20)
    b.join(20)
    assert results["b"] == {"accepted": 0, "duplicates": 1}
    assert Event.objects.filter(external_id=payload["external_id"]).count() == 1
