"""Sources and their sync state (cursor, backoff, errors)."""

from __future__ import annotations

import math
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from almanac.models import Tenant
from connectors.crypto import credentials_encode
from connectors.models import Source, SyncCursor


def source_kind_for_name(name: str) -> str:
    return name if name in Source.Kind.values else Source.Kind.PUSH


def source_ensure(
    *, tenant: Tenant, name: str, kind: str | None = None, config: dict | None = None
) -> Source:
    """The tenant's source called `name`, created on first use (kind from the name when it is
    a known kind, else push). `config` given for a new source only, or merged into an existing one."""
    source = Source.objects.filter(tenant=tenant, name=name).first()
    if source is None:
        try:
            with transaction.atomic():
                source = Source.objects.create(
                    tenant=tenant, name=name, kind=kind or source_kind_for_name(name), config=config or {}
                )
        except IntegrityError:  # created concurrently
            source = Source.objects.get(tenant=tenant, name=name)
    elif config and any(source.config.get(k) != v for k, v in config.items()):
        source.config = {**source.config, **config}
        source.save(update_fields=["config"])
    return source


def source_set_credentials(*, source: Source, value: str | dict) -> None:
    source.credentials = credentials_encode(value)
    source.save(update_fields=["credentials"])


def _cursor_locked(source: Source) -> SyncCursor:
    SyncCursor.objects.get_or_create(source=source)
    return SyncCursor.objects.select_for_update().get(source=source)


@transaction.atomic
def sync_cursor_save(*, source: Source, cursor: dict) -> None:
    """Store the poller's progress (call it in the same transaction as the page's events)."""
    state = _cursor_locked(source)
    state.cursor = cursor
    state.save(update_fields=["cursor"])


@transaction.atomic
def sync_success(*, source: Source) -> None:
    state = _cursor_locked(source)
    now = timezone.now()
    state.last_attempt_at = state.last_attempt_at or now
    state.last_success_at = now
    state.backoff_until = None
    state.consecutive_failures = 0
    state.last_error = ""
    state.save(
        update_fields=[
            "last_attempt_at",
            "last_success_at",
            "backoff_until",
            "consecutive_failures",
            "last_error",
        ]
    )


@transaction.atomic
def sync_failure(*, source: Source, error: str, retry_after: float | None = None) -> SyncCursor:
    """Record a failed poll and back off: `retry_after` when the source said so (429
    Retry-After), else exponentially (BASE * 2**(failures-1)); capped at BACKOFF_MAX either
    way. Progress in the cursor is kept, so the next poll resumes where this one stopped."""
    state = _cursor_locked(source)
    state.consecutive_failures += 1
    delay = settings.CONNECTOR_BACKOFF_BASE_SECONDS * 2 ** min(state.consecutive_failures - 1, 20)
    # A server's Retry-After may be "nan", "inf" or negative: only a real delay replaces ours.
    if retry_after is not None and math.isfinite(retry_after) and retry_after >= 0:
        delay = max(float(retry_after), 1.0)
    delay = min(delay, settings.CONNECTOR_BACKOFF_MAX_SECONDS)
    now = timezone.now()
    state.last_attempt_at = state.last_attempt_at or now
    state.backoff_until = now + timedelta(seconds=delay)
    state.last_error = error[:2000]
    state.save(update_fields=["last_attempt_at", "consecutive_failures", "backoff_until", "last_error"])
    return state


@transaction.atomic
def source_reset_backoff(*, source: Source) -> bool:
    """Allow the next poll now (the failure count and last error stay visible until a
    success). False, and nothing written, when the source is not backing off."""
    if not SyncCursor.objects.filter(source=source, backoff_until__gt=timezone.now()).exists():
        return False
    state = _cursor_locked(source)
    state.backoff_until = None
    state.save(update_fields=["backoff_until"])
    return True


def source_claim_poll(*, source: Source) -> bool:
    """Mark a poll as started unless one started within the poll interval (guarded update,
    so two schedulers never poll the same source twice)."""
    SyncCursor.objects.get_or_create(source=source)
    now = timezone.now()
    due = now - timedelta(minutes=source.poll_minutes)
    from django.db.models import Q

    claimed = (
        SyncCursor.objects.filter(source=source)
        .filter(Q(last_attempt_at__isnull=True) | Q(last_attempt_at__lte=due))
        .filter(Q(backoff_until__isnull=True) | Q(backoff_until__lte=now))
        .update(last_attempt_at=now)
    )
    return claimed == 1
