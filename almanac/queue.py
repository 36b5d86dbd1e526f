"""Coalesced background tasks: one waiting task per piece of work, however often it is asked for.

`enqueue_once(func, *args)` enqueues the django-q2 task `func(*args)` unless the same task
(same function, same arguments) is already waiting in the queue: a burst of a thousand
events asks for one compile of its tenant's inbox, and a page changed by every batch of it
gets one summary task. A `coalesced` task forgets its marker as it starts, so work that
arrives while it runs enqueues a fresh task, which runs after it and sees that work.

The marker is a `QueuedTask` row. A marker older than the broker's retry period is taken as
a task lost between the marker's commit and its enqueue (a killed process) and enqueued
again; the work itself is never lost either way, as every coalesced task's work has a sweep
(docs/operations.md, "The worker's queue").
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


def task_key(func: str, args: tuple) -> str:
    return f"{func}:{json.dumps(list(args), separators=(',', ':'))}"[:200]


def enqueue_once(func: str, *args) -> bool:
    """Enqueue `func(*args)` unless it is already waiting; True if it was enqueued.
    Called after the caller's commit (`transaction.on_commit`), so the task sees its work."""
    lost_before = timezone.now() - timedelta(seconds=settings.Q_CLUSTER["retry"])
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {QueuedTask._meta.db_table} (key, queued_at) VALUES (%s, now()) "
            f"ON CONFLICT (key) DO UPDATE SET queued_at = now() "
            f"WHERE {QueuedTask._meta.db_table}.queued_at < %s RETURNING key",
            [task_key(func, args), lost_before],
        )
        if cursor.fetchone() is None:
            return False
    async_task(func, *args)
    return True


def coalesced(task):
    """A task enqueued by `enqueue_once`: it forgets its marker first, then works."""
    name = f"{task.__module__}.{task.__qualname__}"

    @functools.wraps(task)
    def run(*args):
        QueuedTask.objects.filter(key=task_key(name, args)).delete()
        return task(*args)

    return run
