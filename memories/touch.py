"""In-process buffering of recall hits (MEMORY_TOUCH_MODE=buffer).

Each hit would otherwise cost a queued task (pickling, signing and an INSERT into the
django-q2 queue: ~4-12 ms here) on the request path. In buffer mode the ids are
collected in memory and one UPDATE per process flushes them every
MEMORY_TOUCH_FLUSH_SECONDS from a daemon thread (and at exit). A crash loses at most
that many seconds of hit counts: they are a ranking signal, not a record.
"""

from __future__ import annotations

import atexit
import logging
import threading
from datetime import datetime

from django.db import connections

from memories import conf

log = logging.getLogger("memories")
_lock = threading.Lock()
_pending: dict[int, list] = {}
_timer: threading.Timer | None = None


def record(memory_ids: list[int], at: datetime) -> None:
    global _timer
    with _lock:
        for pk in memory_ids:
            entry = _pending.setdefault(pk, [0, at])
            entry[0] += 1
            entry[1] = max(entry[1], at)
        if _timer is None:
            _timer = threading.Timer(conf.TOUCH_FLUSH_SECONDS, flush)
            _timer.daemon = True
            _timer.start()


def flush() -> int:
    global _timer
    with _lock:
        batch = dict(_pending)
        _pending.clear()
        _timer = None
    if not batch:
        return 0
    from memories.services import memory_touch_counts

    try:
        return memory_touch_counts(counts={pk: (n, at) for pk, (n, at) in batch.items()})
    except Exception:
        log.exception("flushing %d memory hits failed", len(batch))
        return 0
    finally:
        if threading.current_thread() is not threading.main_thread():
            connections.close_all()  # this thread's own connection


atexit.register(flush)
