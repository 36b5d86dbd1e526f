"""In-process buffering of recall hits (MEMORY_TOUCH_MODE=buffer).

Each hit would otherwise cost a queued task (pickling, signing and an INSERT into the
django-q2 queue: ~4-12 ms here) on the request path. In buffer mode the ids are
collected in memory and one UPDATE per process flushes them every
MEMORY_TOUCH_FLUSH_SECONDS from a daemon thread (and at exit), see almanac.buffer. A
crash loses at most that many seconds of hit counts: they are a ranking signal, not a record.
"""

from __future__ import annotations

from datetime import datetime

from almanac.buffer import WriteBuffer
from memories import conf


def _write(batch: list[tuple[list[int], datetime]]) -> int:
    from memories.services import memory_touch_counts

    counts: dict[int, list] = {}
    for memory_ids, at in batch:
        for pk in memory_ids:
            entry = counts.setdefault(pk, [0, at])
            entry[0] += 1
            entry[1] = max(entry[1], at)
    return memory_touch_counts(counts={pk: (n, at) for pk, (n, at) in counts.items()})


_buffer = WriteBuffer("memory hits", _write, lambda: conf.TOUCH_FLUSH_SECONDS)


def record(memory_ids: list[int], at: datetime) -> None:
    _buffer.add([(memory_ids, at)])


def flush() -> int:
    return _buffer.flush()
