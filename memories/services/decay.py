"""Decay (docs/design.md, Memories): active memories nobody recalled for DECAY_AFTER_DAYS whose importance
is below DECAY_BELOW_IMPORTANCE are archived: kept, restorable, no longer retrieved."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from memories.models import Memory
from memories.services.rows import memory_set_status

DECAY_AFTER_DAYS = 180
DECAY_BELOW_IMPORTANCE = 0.3
DECAY_REASON = "job:decay"


def decay_candidates(*, tenant_id: int | None = None):
    """The active memories decay archives now (never recalled: counted from their creation)."""
    cutoff = timezone.now() - timedelta(days=DECAY_AFTER_DAYS)
    rows = Memory.objects.filter(status=Memory.Status.ACTIVE, importance__lt=DECAY_BELOW_IMPORTANCE).filter(
        Q(last_access__lt=cutoff) | Q(last_access__isnull=True, created_at__lt=cutoff)
    )
    return rows if tenant_id is None else rows.filter(tenant_id=tenant_id)


def memories_decay(*, tenant_id: int | None = None) -> int:
    """Archive the decay candidates (audited, with history); returns how many."""
    return memory_set_status(
        memories=decay_candidates(tenant_id=tenant_id),
        status=Memory.Status.ARCHIVED,
        user=None,
        reason=DECAY_REASON,
    )
