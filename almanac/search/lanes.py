"""Independent read-only lanes of one request, run side by side on their own connections.

A context call is a wiki search and a memory recall that do not depend on each other; run
one after the other, each waits for the database while the other could be running there
(measured: about 20% off a context call). The keyword and vector lanes inside one recall
are mostly Python holding the GIL and gained nothing that way, so they stay sequential.

`fork(fn)` hands `fn` to one of a few lane threads (each with its own database
connection, kept like a request's) and returns at once; `.result()` joins it. When no
lane thread is free, or inside a transaction (another connection would not see its
uncommitted rows, as in tests), `fn` runs inline instead, so a fork never waits for a
thread and never changes a result. The caller's context variables (the request's access
snapshot) go with the job. Setting: ALMANAC_LANE_THREADS per process (0: always inline).

Lanes only run while the process serves one request (`InFlightMiddleware` counts them):
under load the other requests already keep the cores busy, and an extra thread only adds
GIL contention (measured with 8 clients on 2 cores: 15.4 req/s with lanes, 18.3 without).
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
from concurrent.futures import Future

from django.conf import settings
from django.db import close_old_connections, connection, connections

_lock = threading.Lock()
_state: dict = {"pid": None, "jobs": None, "free": None, "threads": []}


def _worker(jobs: queue.SimpleQueue) -> None:
    while True:
        job = jobs.get()
        if job is None:
            connections.close_all()
            return
        job()


def _pool():
    """(jobs queue, free-slot semaphore), started on first use in this process (after a fork too)."""
    if _state["pid"] != os.getpid():
        with _lock:
            if _state["pid"] != os.getpid():
                _state["jobs"] = queue.SimpleQueue()
                _state["free"] = threading.BoundedSemaphore(settings.ALMANAC_LANE_THREADS)
                _state["threads"] = [
                    threading.Thread(
                        target=_worker, args=(_state["jobs"],), name=f"almanac-lane-{i}", daemon=True
                    )
                    for i in range(settings.ALMANAC_LANE_THREADS)
                ]
                for thread in _state["threads"]:
                    thread.start()
                _state["pid"] = os.getpid()
    return _state["jobs"], _state["free"]


_in_flight = [0]  # requests this process is serving now (InFlightMiddleware)


class InFlightMiddleware:
    """Counts the requests in progress in this process (lanes run only when it is one)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with _lock:
            _in_flight[0] += 1
        try:
            return self.get_response(request)
        finally:
            with _lock:
                _in_flight[0] -= 1


def fork(fn) -> Future:
    """Start `fn()` in a lane thread if one is free (else run it now); `.result()` joins."""
    future: Future = Future()
    if settings.ALMANAC_LANE_THREADS > 0 and not connection.in_atomic_block and _in_flight[0] <= 1:
        jobs, free = _pool()
        if free.acquire(blocking=False):
            context = contextvars.copy_context()

            def job() -> None:
                try:
                    close_old_connections()  # as at the start of a request: max age, health
                    future.set_result(context.run(fn))
                except BaseException as exc:  # handed to whoever joins
                    future.set_exception(exc)
                finally:
                    free.release()

            jobs.put(job)
            return future
    try:
        future.set_result(fn())
    except Exception as exc:
        future.set_exception(exc)
    return future


def shutdown() -> None:
    """Stop this process's lane threads and close their connections (tests, clean exits)."""
    with _lock:
        if _state["pid"] != os.getpid():
            return
        for _ in _state["threads"]:
            _state["jobs"].put(None)
        for thread in _state["threads"]:
            thread.join(timeout=5)
        _state.update(pid=None, jobs=None, free=None, threads=[])
