import threading
import time

import psycopg
import pytest
from django.db import OperationalError, connection, connections, transaction

from almanac.selectors import group_members
from connectors.models import Event, SyncCursor
from connectors.services import ingest
from connectors.services.ingest import event_ingest, event_ingest_batch
from connectors.services.poller import poll_source
from tests.connectors.conftest import make_event
from tests.connectors.test_membership import A, B, message
from tests.connectors.test_slack_poller import _source as slack_source
from tests.locking import while_locked


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
                event_ingest(tenant=tenant, payload=payload)
                a_ready.set()
                a_release.wait(10)
        finally:
            connections.close_all()

    def writer_b():
        try:
            results["b"] = event_ingest_batch(tenant=tenant, payloads=[payload])
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


@pytest.mark.django_db(transaction=True)
def test_batches_naming_containers_in_opposite_orders_do_not_deadlock(tenant, alice, monkeypatch):
    """Every content event writes its container's visibility: a batch locks all its
    containers' groups in key order first, member lists or not, so a batch naming B then A
    waits for a writer holding A instead of holding B against it. (A deadlock is not
    retried here: whichever side PostgreSQL picks, it shows.)"""
    from connectors.services import ingest

    monkeypatch.setattr(ingest, "is_deadlock", lambda exc: False)

    def event(key: str, n: int) -> dict:
        return make_event(
            source="crm", external_id=f"{key}-{n}", thread_key=f"crm:thread:{key}-{n}",
            occurred_at=f"2026-11-30T1{n}:00:00Z",  # each one newer: each moves the visibility clock
            container={"key": f"crm:account:{key}", "name": key, "public": True},
        )  # fmt: skip

    event_ingest_batch(tenant=tenant, payloads=[event("A", 0), event("B", 0)])
    holding, go, outcome = threading.Event(), threading.Event(), {}

    def writer_1():
        try:
            with transaction.atomic():
                event_ingest(tenant=tenant, payload=event("A", 1))  # holds A
                holding.set()
                go.wait(10)
                event_ingest(tenant=tenant, payload=event("B", 1))  # then wants B
        except Exception as exc:
            outcome["error"] = exc
        finally:
            connections.close_all()

    def writer_2():
        try:
            outcome["batch"] = event_ingest_batch(tenant=tenant, payloads=[event("B", 2), event("A", 2)])
        except Exception as exc:
            outcome["error"] = exc
        finally:
            connections.close_all()

    one, two = threading.Thread(target=writer_1), threading.Thread(target=writer_2)
    one.start()
    assert holding.wait(10)
    two.start()
    for _ in range(200):  # until the batch waits on writer 1's lock
        if _lock_waiters():
            break
        time.sleep(0.05)
    go.set()
    one.join(30)
    two.join(30)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["batch"] == {"accepted": 2, "duplicates": 0}


# --- group locks in key order, deadlocks retried, last write wins under concurrency --------


def _deadlock() -> OperationalError:
    try:
        raise OperationalError("deadlock detected") from psycopg.errors.DeadlockDetected("deadlock detected")
    except OperationalError as exc:
        return exc


@pytest.mark.django_db(transaction=True)
def test_batches_touching_two_groups_in_opposite_orders_do_not_deadlock(tenant, alice, bob):
    members = ["alice@acme.com", "bob@acme.com"]
    event_ingest_batch(tenant=tenant, payloads=[message("CA/0", A, members), message("CB/0", B, members)])
    outcome = while_locked(
        lambda: event_ingest_batch(tenant=tenant, payloads=[message("CA/1", A, members, 1)]),
        lambda: event_ingest_batch(
            tenant=tenant, payloads=[message("CB/2", B, members, 2), message("CA/2", A, members, 2)]
        ),
        then=lambda: event_ingest_batch(tenant=tenant, payloads=[message("CB/3", B, members, 3)]),
    )
    assert outcome == {"value": {"accepted": 2, "duplicates": 0}}
    assert Event.objects.count() == 6


@pytest.mark.django_db
def test_push_retries_a_deadlock_then_answers_503(push, tenant, alice, monkeypatch):
    real, calls = ingest._ingest_parsed, []

    def once(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise _deadlock()
        return real(**kwargs)

    monkeypatch.setattr(ingest, "deadlock_pause", lambda attempt: None)
    monkeypatch.setattr(ingest, "_ingest_parsed", once)
    assert push(make_event()).status_code == 202 and len(calls) == 2

    def always(**kwargs):
        raise _deadlock()

    monkeypatch.setattr(ingest, "_ingest_parsed", always)
    response = push(make_event(external_id="C123/2"))
    assert response.status_code == 503
    assert "retry" in response.json()["detail"]


@pytest.mark.django_db
def test_poll_page_retried_after_a_deadlock(company, slack_api, monkeypatch):
    from connectors.services import importer

    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    monkeypatch.setattr(ingest, "deadlock_pause", lambda attempt: None)
    real, calls = importer.ingest_all, []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise _deadlock()
        return real(**kwargs)

    monkeypatch.setattr(importer, "ingest_all", flaky)
    result = poll_source(source=slack_source(company.tenant, slack_api))
    assert result["state"] == "ok" and result["accepted"] == 5
    assert SyncCursor.objects.get().last_error == ""


@pytest.mark.django_db(transaction=True)
def test_older_list_waiting_on_a_newer_one_does_not_regrant(tenant, alice, bob):
    both = ["alice@acme.com", "bob@acme.com"]
    event_ingest_batch(tenant=tenant, payloads=[message("CA/0", A, ["alice@acme.com"], 0)])
    outcome = while_locked(
        lambda: event_ingest_batch(tenant=tenant, payloads=[message("CA/20", A, ["alice@acme.com"], 20)]),
        lambda: event_ingest_batch(tenant=tenant, payloads=[message("CA/10", A, both, 10)]),
    )
    assert outcome == {"value": {"accepted": 1, "duplicates": 0}}
    assert group_members(tenant=tenant, key=A) == ["alice"]
