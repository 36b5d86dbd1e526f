"""Decay (docs/design.md, Memories): active memories nobody recalled for a tenant's decay
period whose importance is below its decay threshold are archived: kept, restorable, no
longer retrieved. The thresholds are the tenant's (`memories.services.lifecycle`)."""

from __future__ import annotations

from django.db.models import Q

from memories.models import Memory
from memories.services.lifecycle import Lifecycle, days_ago, lifecycle_q
from memories.services.rows import memory_set_status

DECAY_REASON = "job:decay"


def _decays(lifecycle: Lifecycle) -> Q:
    cutoff = days_ago(lifecycle.decay_after_days)
    return Q(importance__lt=lifecycle.decay_below_importance) & (
        Q(last_access__lt=cutoff) | Q(last_access__isnull=True, created_at__lt=cutoff)
    )


def decay_candidates(*, tenant_id: int | None = None):
    """The active memories decay archives now (never recalled: counted from their creation);
    what `memories_decay --dry-run` and the admin's preview list."""
    return Memory.objects.filter(status=Memory.Status.ACTIVE).filter(lifecycle_q(tenant_id, _decays))


def memories_decay(*, tenant_id: int | None = None) -> int:
    """Archive the decay candidates (audited, with history); returns how many."""
    return memory_set_status(
        memories=decay_candidates(tenant_id=tenant_id),
        status=Memory.Status.ARCHIVED,
        user=None,
        reason=DECAY_REASON,
    )
