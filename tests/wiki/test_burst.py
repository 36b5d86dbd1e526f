"""A burst of pushed events: one waiting drain per tenant and one waiting summary per page,
every event compiled exactly once, and a failed drain's events picked up again."""

import re
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connections
from django.utils.module_loading import import_string

from connectors.models import Event
from connectors.services.ingest import event_ingest
from tests.wiki.conftest import slack
from wiki.models import Page, PageSection
from wiki.services import backlog

CUSTOMERS = ["Vercel", "Stripe", "Globex"]


def burst(tenant, n: int, *, start: int = 0) -> None:
    """`n` events pushed one at a time, each in its own transaction (a webhook's delivery):
    three customers, replies in a few threads."""
    for i in range(start, start + n):
        root = f"17000{i // 5 * 5:05d}.000100"
        event_ingest(
            tenant=tenant,
            payload=slack(
                f"{CUSTOMERS[i % 3]} update number {i}",
                tags={"customer": CUSTOMERS[i % 3]},
                ts=f"17000{i:05d}.000100",
                thread=root,
                minutes=i,
            ),
        )


@pytest.fixture
def queue(monkeypatch):
    """The broker: what `almanac.queue.enqueue_once` enqueues is recorded, not run."""
    tasks: list[tuple] = []
    monkeypatch.setattr("almanac.queue.async_task", lambda func, *args: tasks.append((func, *args)))
    return tasks


def work(queue: list[tuple]) -> list[tuple]:
    """Run the queued tasks as the worker does, first in first out, until none is left."""
    done = []
    while queue:
        func, *args = queue.pop(0)
        import_string(func)(*args)
        done.append((func, *args))
    return done


@pytest.fixture
def compiled_by_batches(monkeypatch):
    """How many times each event was compiled (moved from pending to compiled) by a batch."""
    seen: Counter = Counter()
    compile_batch = backlog.compile_batch

    def counting(event_ids):
        before = set(Event.objects.filter(id__in=event_ids, state="pending").values_list("id", flat=True))
        done = compile_batch(event_ids)
        seen.update(
            before
            & set(Event.objects.filter(id__in=event_ids, state="compiled").values_list("id", flat=True))
        )
        return done

    monkeypatch.setattr(backlog, "compile_batch", counting)
    return seen


@pytest.mark.django_db(transaction=True)
def test_a_burst_enqueues_one_drain_and_one_summary_per_page(
    tenant, alice, queue, compiled_by_batches, monkeypatch, settings
):
    settings.WIKI_SUMMARY_ENABLED = True
    monkeypatch.setattr(backlog, "BATCH", 7)  # every page changes in several batches
    burst(tenant, 60)
    assert queue == [("wiki.tasks.inbox_drain_task", tenant.pk)]

    func, *args = queue.pop(0)
    import_string(func)(*args)
    summaries = Counter(args[0] for func, *args in queue if func == "wiki.tasks.page_summarize_task")
    assert len(queue) == sum(summaries.values())  # and no other drain
    assert set(summaries.values()) == {1}
    customers = Page.objects.filter(tenant=tenant, kind="customer").values_list("id", flat=True)
    assert len(customers) == 3 and set(customers) <= set(summaries)

    events = set(Event.objects.filter(tenant=tenant).values_list("id", flat=True))
    assert len(events) == 60 and set(compiled_by_batches) == events
    assert set(compiled_by_batches.values()) == {1}  # each exactly once
    for content in PageSection.objects.filter(tenant=tenant).values_list("content", flat=True):
        assert set(Counter(re.findall(r"update number (\d+)\b", content)).values()) <= {1}  # no item twice

    work(queue)
    burst(tenant, 5, start=60)  # work that arrives after the tasks started asks again
    assert queue == [("wiki.tasks.inbox_drain_task", tenant.pk)]
    work(queue)
    assert set(compiled_by_batches.values()) == {1} and len(compiled_by_batches) == 65
    assert not Event.objects.filter(tenant=tenant).exclude(state="compiled").exists()


@pytest.mark.django_db(transaction=True)
def test_a_drain_that_finds_another_at_work_leaves_the_events_to_it(tenant, alice, queue):
    from wiki.services.backlog import _drain_lock, inbox_drain

    burst(tenant, 6)
    second = {}

    def other_worker():
        try:
            second["compiled"] = inbox_drain(tenant_id=tenant.pk)
        finally:
            connections.close_all()

    with _drain_lock(tenant.pk) as held:  # this worker's drain is at work
        assert held
        thread = threading.Thread(target=other_worker)
        thread.start()
        thread.join(30)
    assert second == {"compiled": 0}
    assert Event.objects.filter(tenant=tenant, state="pending").count() == 6
    assert inbox_drain(tenant_id=tenant.pk) == 6


@pytest.mark.django_db(transaction=True)
def test_a_failed_drain_leaves_its_events_to_the_next_drain_and_the_sweep(tenant, alice, queue, monkeypatch):
    from wiki.tasks import compile_sweep_task, inbox_drain_task

    burst(tenant, 8)

    def crash(ids, **kwargs):  # the worker dies mid-drain: its transaction rolls back
        raise RuntimeError("worker killed")

    with monkeypatch.context() as patch:
        patch.setattr(backlog, "_compile_ids", crash)
        with pytest.raises(RuntimeError):
            work(queue)
    assert Event.objects.filter(tenant=tenant, state="pending").count() == 8
    assert compile_sweep_task() == 0  # too young: a drain may still come
    Event.objects.filter(tenant=tenant).update(
        received_at=Event.objects.first().received_at - timedelta(minutes=5)
    )
    assert compile_sweep_task() == 8
    assert not Event.objects.filter(tenant=tenant).exclude(state="compiled").exists()

    with monkeypatch.context() as patch:
        patch.setattr(backlog, "_compile_ids", crash)
        burst(tenant, 3, start=8)
        with pytest.raises(RuntimeError):
            work(queue)
    burst(tenant, 1, start=11)  # the failed task's marker is gone: the next push asks again
    assert queue == [("wiki.tasks.inbox_drain_task", tenant.pk)]
    assert inbox_drain_task(tenant.pk) == 4
