"""Recall hits: `access_count`/`last_access` of the memories a reader was shown, counted off
the request path (callers decide what was shown: the memories search endpoint, the context
call; never the web UI's browsing).

MEMORY_TOUCH_MODE=buffer: each hit would otherwise cost a queued task (pickling, signing
and an INSERT into the django-q2 queue: ~4-12 ms here) on the request path. In buffer mode
the ids are collected in memory and one UPDATE per process flushes them every
MEMORY_TOUCH_FLUSH_SECONDS from a daemon thread (and at exit), see almanac.buffer. A crash
loses at most that many seconds of hit counts: they decide decay (what is archived as
unused), never ranking, and are no record.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django_q.tasks import async_task

from almanac.buffer import WriteBuffer
from almanac.selectors import int_array, text_array
from memories.models import Memory


def memory_touch(*, memory_ids: list[int], at) -> int:
    """Bump access_count/last_access (no history row: reads are not changes)."""
    return memory_touch_counts(counts={pk: (1, at) for pk in memory_ids})


def memory_touch_later(*, memory_ids: list[int]) -> None:
    """Count recall hits off the request path, after the reading transaction commits
    (nothing when MEMORY_TOUCH_ON_RECALL is off, or there is nothing to count)."""
    if not memory_ids or not settings.MEMORY_TOUCH_ON_RECALL:
        return
    now = timezone.now()
    ids = sorted(memory_ids)
    if settings.MEMORY_TOUCH_MODE == "buffer":
        transaction.on_commit(lambda: record(ids, now))
    else:
        transaction.on_commit(lambda: async_task("memories.tasks.memory_touch_task", ids, now.isoformat()))


def memory_touch_counts(*, counts: dict[int, tuple[int, datetime]]) -> int:
    """Add n hits and move last_access forward for many memories in one UPDATE (sorted: no deadlocks)."""
    ids = sorted(counts)
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE {Memory._meta.db_table} AS m
                SET access_count = m.access_count + u.n, last_access = GREATEST(m.last_access, u.at)
                FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS u(id, n, at)
                WHERE m.id = u.id""",
            [
                int_array(ids),
                int_array(counts[i][0] for i in ids),
                text_array(counts[i][1].isoformat() for i in ids),
            ],
        )
        return cursor.rowcount


def _write(batch: list[tuple[list[int], datetime]]) -> int:
    counts: dict[int, list] = {}
    for memory_ids, at in batch:
        for pk in memory_ids:
            entry = counts.setdefault(pk, [0, at])
            entry[0] += 1
            entry[1] = max(entry[1], at)
    return memory_touch_counts(counts={pk: (n, at) for pk, (n, at) in counts.items()})


_buffer = WriteBuffer("memory hits", _write, lambda: settings.MEMORY_TOUCH_FLUSH_SECONDS)


def record(memory_ids: list[int], at: datetime) -> None:
    _buffer.add([(memory_ids, at)])


def flush() -> int:
    return _buffer.flush()
