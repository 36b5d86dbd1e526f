"""Writes taken off the request path: collected in-process, written in one batch later.

Used for what a request produces but nobody waits for: recall hit counts, the run log
of the page summaries a context call makes. `add()` costs a list append; the first item
of a batch starts a timer, and `seconds` later a daemon thread hands the whole batch to
`write` (one UPDATE or INSERT for many requests). Pending items are also written at exit.
A crash loses at most `seconds` of them, which is why only records that are signals or
logs (never data someone wrote) go through a buffer.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable

from django.db import connections

log = logging.getLogger("almanac")


class WriteBuffer:
    instances: list[WriteBuffer] = []

    def __init__(self, name: str, write: Callable[[list], int], seconds: Callable[[], float]):
        self.name = name
        self._write = write
        self._seconds = seconds  # read at each batch start (settings may change in tests)
        self._lock = threading.Lock()
        self._items: list = []
        self.timer: threading.Timer | None = None
        atexit.register(self.flush)
        WriteBuffer.instances.append(self)

    def add(self, items: list) -> None:
        with self._lock:
            self._items.extend(items)
            if self.timer is None:
                self.timer = threading.Timer(self._seconds(), self.flush)
                self.timer.daemon = True
                self.timer.start()

    def discard(self) -> int:
        """Drop what is pending without writing it (its transaction was rolled back)."""
        with self._lock:
            batch, self._items = self._items, []
            timer, self.timer = self.timer, None
        if timer is not None:
            timer.cancel()
        return len(batch)

    def flush(self) -> int:
        """Write what is pending now; returns what `write` reports (0 on failure, logged)."""
        with self._lock:
            batch, self._items = self._items, []
            timer, self.timer = self.timer, None
        in_timer = timer is not None and timer is threading.current_thread()
        if timer is not None and not in_timer:
            timer.cancel()
        if not batch:
            return 0
        try:
            return self._write(batch)
        except Exception:
            log.exception("writing %d buffered %s failed", len(batch), self.name)
            return 0
        finally:
            if in_timer:
                connections.close_all()  # the timer thread's own connection
