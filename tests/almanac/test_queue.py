"""almanac.queue: one task per piece of work, waiting or running; a running task asked for
again runs once more; a lost or failed task does not block the next ask."""

from datetime import timedelta

import pytest
from django.utils import timezone

from almanac.models import QueuedTask
from almanac.queue import coalesced, enqueue_once

FUNC = "tests.almanac.test_queue.work"
calls: list[int] = []
during: list = []  # what to do inside the next run (another ask, a failure)


@coalesced
def work(n: int) -> int:
    calls.append(n)
    if during:
        during.pop(0)()
    return len(calls)


@pytest.fixture
def queue(monkeypatch, db):
    calls.clear()
    during.clear()
    tasks: list[tuple] = []
    monkeypatch.setattr("almanac.queue.async_task", lambda func, *args: tasks.append((func, *args)))
    return tasks


def test_a_waiting_task_is_enqueued_once_per_arguments(queue):
    assert [enqueue_once(FUNC, 1), enqueue_once(FUNC, 1), enqueue_once(FUNC, 2)] == [True, False, True]
    assert queue == [(FUNC, 1), (FUNC, 2)]
    work(1)
    assert calls == [1] and not QueuedTask.objects.filter(key__contains=":[1]").exists()
    assert enqueue_once(FUNC, 1) and queue[-1] == (FUNC, 1)  # done: asked again, enqueued again


def test_a_task_asked_for_while_it_runs_runs_once_more_without_a_new_task(queue):
    enqueue_once(FUNC, 1)
    during.extend([lambda: enqueue_once(FUNC, 1), lambda: enqueue_once(FUNC, 1)])
    work(1)
    assert calls == [1, 1, 1]  # each ask during a run: one more run
    assert queue == [(FUNC, 1)] and not QueuedTask.objects.exists()


def test_a_failed_task_leaves_no_marker(queue):
    enqueue_once(FUNC, 1)

    def fail():
        raise RuntimeError("worker killed")

    during.append(fail)
    with pytest.raises(RuntimeError):
        work(1)
    assert enqueue_once(FUNC, 1) and len(queue) == 2


def test_a_marker_older_than_the_retry_period_is_a_lost_task(queue, settings):
    enqueue_once(FUNC, 1)
    QueuedTask.objects.update(running=True)  # its worker was killed mid-run
    assert not enqueue_once(FUNC, 1)
    old = timezone.now() - timedelta(seconds=settings.Q_CLUSTER["retry"] + 1)
    QueuedTask.objects.update(queued_at=old)
    assert enqueue_once(FUNC, 1) and queue == [(FUNC, 1), (FUNC, 1)]
    assert QueuedTask.objects.get().running is False
