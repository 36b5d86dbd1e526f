"""Recall hits: `access_count`/`last_access` of the memories a reader was shown, counted off
the request path (callers decide what was shown: the memories search endpoint, the context
call; never the web UI's browsing).

MEMORY_TOUCH_MODE=buffer: each hit would otherwise cost a queued task (pickling, signing
and an INSERT into the django-q2 queue: ~4-12 ms here) on the request path. In buffer mode
the ids are collected in memory and one UPDATE per process flushes them every
MEMORY_TOUCH_FLUSH_SECONDS from a daemon thread (and at exit), see almanac.buffer. A crash
loses at most that many seconds of hit counts: they decide decay (what is archived as
unused), never ranking, and are no record.

The same flush counts each memory's hits in its recall window (`RecallWindow`): the memory
that reaches MEMORY_HOT_RECALLS in a window is announced once (`memory.hot`, to skills).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django_q.tasks import async_task

from almanac.buffer import WriteBuffer
from almanac.selectors import int_array, text_array
from memories.models import Memory, RecallWindow
from memories.services.events import memory_hot_payload
from skills.signals import domain_event


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
    """Add n hits and move last_access forward for many memories in one UPDATE (sorted: no
    deadlocks); count them in their recall windows too (`memory.hot`)."""
    ids = sorted(counts)
    if not ids:
        return 0
    touched = _access_count(ids, counts)
    memory_hot_announce(recalls_count(counts=counts))
    return touched


def _access_count(ids: list[int], counts: dict[int, tuple[int, datetime]]) -> int:
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


def window_start(at: datetime) -> datetime:
    """The start of the recall window `at` falls in (windows back to back from the epoch)."""
    size = settings.MEMORY_HOT_WINDOW_SECONDS
    return datetime.fromtimestamp(int(at.timestamp()) // size * size, tz=UTC)


def recalls_count(*, counts: dict[int, tuple[int, datetime]]) -> list[tuple[int, int, datetime]]:
    """Add each memory's n hits to its window (a later window starts the count again, an
    earlier one is gone); returns (memory id, recalls, window start) of the memories whose
    count reached MEMORY_HOT_RECALLS with these hits: once per window, however the hits
    were split into flushes (each upsert sees the count before and after its own hits)."""
    ids = sorted(counts)
    windows = [window_start(counts[pk][1]) for pk in ids]
    hits = [counts[pk][0] for pk in ids]
    table = RecallWindow._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO {table} AS w (memory_id, window_start, recalls)
                SELECT u.id, u.w, u.n
                FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS u(id, n, w)
                JOIN {Memory._meta.db_table} m ON m.id = u.id
                ORDER BY u.id
                ON CONFLICT (memory_id) DO UPDATE SET
                    recalls = CASE
                        WHEN EXCLUDED.window_start > w.window_start THEN EXCLUDED.recalls
                        WHEN EXCLUDED.window_start = w.window_start THEN w.recalls + EXCLUDED.recalls
                        ELSE w.recalls END,
                    window_start = GREATEST(w.window_start, EXCLUDED.window_start)
                RETURNING memory_id, recalls, window_start""",
            [int_array(ids), int_array(hits), text_array(w.isoformat() for w in windows)],
        )
        rows = cursor.fetchall()
    threshold = settings.MEMORY_HOT_RECALLS
    wanted = dict(zip(ids, zip(hits, windows, strict=True), strict=True))
    return [
        (pk, recalls, start)
        for pk, recalls, start in rows
        if start == wanted[pk][1] and recalls >= threshold > recalls - wanted[pk][0]
    ]


def memory_hot_announce(hot: list[tuple[int, int, datetime]]) -> None:
    """`memory.hot` for each active memory that just became hot in its window."""
    if not hot:
        return
    found = {pk: (recalls, start) for pk, recalls, start in hot}
    rows = Memory.objects.filter(pk__in=list(found), status=Memory.Status.ACTIVE).select_related("owner")
    for memory in rows.defer("embedding").order_by("pk"):
        recalls, start = found[memory.pk]
        payload = memory_hot_payload(
            memory, recalls=recalls, window_start=start, window_seconds=settings.MEMORY_HOT_WINDOW_SECONDS
        )
        domain_event.send(sender=Memory, event="memory.hot", payload=payload, tenant_id=memory.tenant_id)


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
