"""Two writers at once, in order: the first holds its locks while the second starts."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction


def waiting_on_lock() -> bool:
    """Some transaction waits for a lock (advisory, row or another transaction's)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype IN ('advisory', 'tuple', 'transactionid')"
        )
        return cursor.fetchone()[0] > 0


def while_locked(first, second, then=None) -> dict:
    """Run `first` in a transaction; while it is still open, start `second` in another thread
    and, once `second` waits on a lock, run `then` (if any) and commit. Returns
    {"value": what `second` returned} or {"error": what it raised}."""
    outcome: dict = {}

    def worker():
        try:
            outcome["value"] = second()
        except Exception as exc:
            outcome["error"] = exc
        finally:
            connections.close_all()

    with transaction.atomic():
        first()
        thread = threading.Thread(target=worker)
        thread.start()
        for _ in range(2000):
            if waiting_on_lock():
                break
            threading.Event().wait(0.005)
        else:
            pytest.fail("the second writer never waited for the first one's lock")
        if then is not None:
            then()
    thread.join(30)
    return outcome


def committed_meanwhile(write) -> None:
    """Run `write` in a transaction of its own that commits before this returns (another
    request landing while the caller's transaction is still open)."""

    def worker():
        try:
            with transaction.atomic():
                write()
        finally:
            connections.close_all()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(30)
