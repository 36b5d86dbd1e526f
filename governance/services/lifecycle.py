"""A tenant's lifecycle in the admin (docs/operations.md, Memory lifecycle): the preview of
what decay and compression would do now, with the very functions `memories_decay
--dry-run` and `memories_compress --dry-run` print (nothing is written), and "Run now"."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django_q.tasks import async_task

from almanac.services.audit import audit_record
from memories.models import Memory
from memories.services.compression import Planned, compressed_expiring, memories_compress_run
from memories.services.decay import decay_candidates
from memories.services.lifecycle import Lifecycle, lifecycle_for

PREVIEW_ROWS = 200


@dataclass
class Preview:
    lifecycle: Lifecycle
    decay: list[Memory]
    decay_total: int
    groups: list[Planned]
    expiring: list[tuple[Memory, bool]]


def lifecycle_preview(*, tenant_id: int) -> Preview:
    """What decay would archive and compression would write and expire in the tenant now
    (the first PREVIEW_ROWS decay candidates, all groups); writes nothing."""
    decay = decay_candidates(tenant_id=tenant_id).defer("embedding").order_by("pk")
    return Preview(
        lifecycle=lifecycle_for(tenant_id),
        decay=list(decay[:PREVIEW_ROWS]),
        decay_total=decay.count(),
        groups=memories_compress_run(tenant_id=tenant_id, dry_run=True),
        expiring=compressed_expiring(tenant_id=tenant_id),
    )


def lifecycle_run(*, tenant_id: int, actor: str) -> None:
    """Decay and compression of one tenant, queued now (after the commit) for the worker:
    compression calls the LLM, never inside a request. Audited as `lifecycle.run`."""
    audit_record(
        action="lifecycle.run", tenant_id=tenant_id, actor=actor, object_type="tenant", object_id=tenant_id
    )
    transaction.on_commit(lambda: async_task("memories.tasks.memory_decay_task", tenant_id))
    transaction.on_commit(lambda: async_task("memories.tasks.memory_compress_task", tenant_id))
