"""Coalesced background tasks: one task per piece of work, however often it is asked for.

`enqueue_once(func, *args)` enqueues the django-q2 task `func(*args)` unless the same task
(same function, same arguments) is already waiting or running: a burst of a thousand
events asks for one drain of its tenant's inbox, and a page changed by every batch of it
gets one summary task. Asked for while it runs, a `coalesced` task runs once more when it
ends (in the same worker, no new task), so work that arrived meanwhile is seen.

The marker is a `QueuedTask` row: inserted with the task, marked running as the task
starts, deleted as it ends (also when it fails). A marker older than the broker's retry
period is taken as a task lost (a process killed between the marker and the enqueue, or
during the task) and the task is enqueued again; the work itself is never lost either way,
as every coalesced task's work has a sweep (docs/operations.md, "The worker's queue").
"""

from __future__ import annotations

import functools
import json
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django_q.tasks import async_task

from almanac.models import QueuedTask

TABLE = QueuedTask._meta.db_table


def task_key(func: str, args: tuple) -> str:
    return f"{func}:{json.dumps(list(args), separators=(',', ':'))}"[:200]


def enqueue_once(func: str, *args) -> bool:
    """Enqueue `func(*args)` unless it is waiting (nothing to do) or running (it will run
    once more); True if it was enqueued. Called after the caller's commit
    (`transaction.on_commit`), so the task sees its work."""
    key = task_key(func, args)
    lost_before = timezone.now() - timedelta(seconds=settings.Q_CLUSTER["retry"])
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TABLE} (key, queued_at, running, again) VALUES (%s, now(), false, false) "
                "ON CONFLICT (key) DO UPDATE SET queued_at = now(), running = false, again = false "
                f"WHERE {TABLE}.queued_at < %s RETURNING key",  # new, or taken over from a lost task
                [key, lost_before],
            )
            if cursor.fetchone() is not None:
                async_task(func, *args)
                return True
        if QueuedTask.objects.filter(key=key, running=False).exists():
            return False  # waiting: it will see the work
        if QueuedTask.objects.filter(key=key, running=True).update(again=True):
            return False  # running: it runs once more
        # the marker went between the two statements (its task ended): ask again


def coalesced(task):
    """A task enqueued by `enqueue_once`: marked running while it works, run once more
    (here) if it was asked for meanwhile, its marker deleted when it ends or fails."""
    name = f"{task.__module__}.{task.__qualname__}"

    @functools.wraps(task)
    def run(*args):
        key = task_key(name, args)
        QueuedTask.objects.filter(key=key).update(running=True, again=False, queued_at=timezone.now())
        try:
            while True:
                result = task(*args)
                if QueuedTask.objects.filter(key=key, again=False).delete()[0]:
                    return result
                if not QueuedTask.objects.filter(key=key).update(again=False):
                    return result  # no marker (called directly, or taken over as lost)
        except BaseException:
            QueuedTask.objects.filter(key=key).delete()  # the next ask enqueues it; the sweep
            raise

    return run
