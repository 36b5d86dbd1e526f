"""Receivers: what connectors announce (`connectors.signals`) reaches the wiki.

The wiki reads connectors' events; connectors never import the wiki. Each receiver hands
over at once (docs/style.md, Where code goes: no logic in signals). Connected in `WikiConfig.ready`.
"""

from __future__ import annotations

from django.db import transaction
from django_q.tasks import async_task

from wiki.services.visibility import container_visibility_at_ingest


def event_ingested(sender, *, event_id: int, **kwargs) -> None:
    """A new event is stored: compile it once the ingest commits (a rolled-back batch
    enqueues nothing; the sweep catches a task lost between commit and enqueue)."""
    transaction.on_commit(lambda: async_task("wiki.tasks.compile_event_task", event_id))


def container_visibility_changed(sender, *, tenant, container_key: str, public: bool, **kwargs) -> None:
    """A container turned private (or public): its sections follow inside the ingest's
    transaction, not when a worker compiles the event."""
    container_visibility_at_ingest(tenant=tenant, container_key=container_key, public=public)
