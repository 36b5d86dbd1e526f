"""Connector background work (django-q2): the per-minute scheduler and one poll per source."""

from __future__ import annotations

from django_q.tasks import async_task

from connectors.models import Source
from connectors.services.poller import is_pollable, poll_source
from connectors.services.sources import source_claim_poll

SCHEDULES = [
    {"name": "connectors.poll_due_sources", "func": "connectors.tasks.poll_due_sources", "minutes": 1},
]


def poll_due_sources() -> int:
    """Enqueue a poll for every enabled, configured source whose interval elapsed and which is
    not backing off. The claim is a guarded update, so overlapping schedulers poll once."""
    enqueued = 0
    for source in Source.objects.filter(enabled=True).order_by("id"):
        if is_pollable(source) and source_claim_poll(source=source):
            async_task("connectors.tasks.source_poll_task", source.id)
            enqueued += 1
    return enqueued


def source_poll_task(source_id: int, force: bool = False) -> dict | None:
    source = Source.objects.select_related("tenant").filter(id=source_id, enabled=True).first()
    if source is None or not is_pollable(source):
        return None  # deleted or disabled since it was enqueued
    return poll_source(source=source, force=force)
