"""Lanes (`almanac.search.lanes.fork`): side by side on their own connections when that is safe,
inline otherwise, with the same answers either way."""

import threading

import pytest
from django.db import connection

from almanac.search import lanes
from almanac.selectors import access_snapshot, snapshot_memo
from almanac.services.users import user_set_projects


def _backend_and_thread():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0], threading.current_thread().name


@pytest.fixture
def lane_threads(settings):
    settings.ALMANAC_LANE_THREADS = 2
    lanes.shutdown()
    yield
    lanes.shutdown()  # closes the lane threads' connections before the next test's flush


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_lane_runs_on_its_own_connection(lane_threads):
    here = _backend_and_thread()
    there = lanes.fork(_backend_and_thread).result(timeout=10)
    assert there[1].startswith("almanac-lane-") and there[0] != here[0]


@pytest.mark.django_db(transaction=True)
def test_a_lane_sees_the_callers_access_snapshot(lane_threads):
    with access_snapshot():
        snapshot_memo("k", lambda: "from the caller")
        seen = lanes.fork(lambda: snapshot_memo("k", lambda: "computed in the lane")).result(timeout=10)
    assert seen == "from the caller"


@pytest.mark.django_db(transaction=True)
def test_errors_reach_the_caller_and_the_slot_is_freed(lane_threads):
    def broken():
        raise ValueError("lane failed")

    for _ in range(3):  # more than THREADS: a leaked slot would turn later forks inline
        with pytest.raises(ValueError, match="lane failed"):
            lanes.fork(broken).result(timeout=10)
    assert lanes.fork(_backend_and_thread).result(timeout=10)[1].startswith("almanac-lane-")


@pytest.mark.django_db(transaction=True)
def test_no_free_thread_means_inline_never_waiting(lane_threads):
    release = threading.Event()
    busy = [lanes.fork(lambda: release.wait(10)) for _ in range(2)]
    try:
        assert lanes.fork(_backend_and_thread).result(timeout=1)[1] == threading.current_thread().name
    finally:
        release.set()
        for future in busy:
            future.result(timeout=10)


def test_inside_a_transaction_lanes_run_inline(db, lane_threads):
    # Another connection would not see this transaction's uncommitted rows.
    assert connection.in_atomic_block
    assert lanes.fork(_backend_and_thread).result() == _backend_and_thread()


@pytest.mark.django_db(transaction=True)
def test_recall_and_context_agree_with_and_without_lanes(lane_threads, settings, tenant, alice, bob):
    """A context call with its memory recall forked: the same prompt as without lanes, and
    a revocation applies to the forked recall on the next read too."""
    from context.services import context_build
    from memories import selectors
    from memories.services.memories import memory_create

    for text in ("Apollo launch moved to 3 May", "Apollo budget is 120k EUR", "tea with lemon"):
        memory_create(owner=bob, content=text, scope="project", scope_key="Apollo")
    memory_create(owner=bob, content="Apollo private note of bob", scope="user")

    def recall():
        return [(h.memory.pk, h.score) for h in selectors.memory_search(user=alice, query="Apollo budget")]

    def context():
        out = context_build(user=alice, tenant=tenant, task="Apollo budget", max_tokens=500)
        return out["prompt"]

    forked = recall(), context()
    settings.ALMANAC_LANE_THREADS = 0
    assert (recall(), context()) == forked
    assert len(forked[0]) == 2 and "120k EUR" in forked[1] and "private note" not in forked[1]

    settings.ALMANAC_LANE_THREADS = 2
    user_set_projects(user=alice, names=[])
    assert recall() == [] and "Apollo" not in context()


@pytest.mark.django_db(transaction=True)
def test_while_the_process_serves_other_requests_lanes_run_inline(lane_threads, monkeypatch):
    # Under load the other requests keep the cores busy: an extra thread only adds contention.
    monkeypatch.setattr(lanes, "_in_flight", [1])
    assert lanes.fork(_backend_and_thread).result(timeout=10)[1].startswith("almanac-lane-")
    monkeypatch.setattr(lanes, "_in_flight", [2])
    assert lanes.fork(_backend_and_thread).result(timeout=10)[1] == threading.current_thread().name


def test_the_middleware_counts_requests_in_flight():
    seen = []
    middleware = lanes.InFlightMiddleware(lambda request: seen.append(lanes._in_flight[0]) or "response")
    before = lanes._in_flight[0]
    assert middleware(object()) == "response" and seen == [before + 1] and lanes._in_flight[0] == before
