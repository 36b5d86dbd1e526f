"""A tenant's memory lifecycle thresholds (docs/operations.md, Memory lifecycle): decay and
compression read them here, per tenant. A tenant's `LifecycleSettings` field overrides the
environment's value (`MEMORY_DECAY_AFTER_DAYS`, `MEMORY_DECAY_BELOW_IMPORTANCE`,
`MEMORY_COMPRESS_MIN`, `MEMORY_COMPRESSED_KEEP_DAYS`); an empty one keeps it."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from memories.models import LifecycleSettings


@dataclass(frozen=True)
class Lifecycle:
    decay_after_days: int
    decay_below_importance: float
    compress_min: int
    compressed_keep_days: int


def lifecycle_defaults() -> Lifecycle:
    """The environment's values (read at call time: tests change them with `settings`)."""
    return Lifecycle(
        decay_after_days=settings.MEMORY_DECAY_AFTER_DAYS,
        decay_below_importance=settings.MEMORY_DECAY_BELOW_IMPORTANCE,
        compress_min=settings.MEMORY_COMPRESS_MIN,
        compressed_keep_days=settings.MEMORY_COMPRESSED_KEEP_DAYS,
    )


def _merged(defaults: Lifecycle, row: LifecycleSettings) -> Lifecycle:
    own = {f.name: getattr(row, f.name) for f in fields(Lifecycle) if getattr(row, f.name) is not None}
    return replace(defaults, **own)


def lifecycle_for(tenant_id: int) -> Lifecycle:
    """The thresholds of one tenant."""
    row = LifecycleSettings.objects.filter(tenant_id=tenant_id).first()
    defaults = lifecycle_defaults()
    return defaults if row is None else _merged(defaults, row)


def lifecycle_overrides() -> dict[int, Lifecycle]:
    """{tenant id: thresholds} of the tenants that set any of their own."""
    defaults = lifecycle_defaults()
    return {row.tenant_id: _merged(defaults, row) for row in LifecycleSettings.objects.all()}


def lifecycle_q(tenant_id: int | None, condition) -> Q:
    """A filter of memories, per tenant: `condition(lifecycle)` (a Q) under each tenant's
    thresholds. `tenant_id`: that tenant only; None: every tenant (those without settings
    of their own under the environment's)."""
    if tenant_id is not None:
        return Q(tenant_id=tenant_id) & condition(lifecycle_for(tenant_id))
    overrides = lifecycle_overrides()
    query = ~Q(tenant_id__in=list(overrides)) & condition(lifecycle_defaults())
    for tenant, lifecycle in overrides.items():
        query |= Q(tenant_id=tenant) & condition(lifecycle)
    return query


def days_ago(days: int):
    return timezone.now() - timedelta(days=days)
