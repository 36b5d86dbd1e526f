"""Reads of the connectors app: sources with their freshness, event history."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from almanac.models import Tenant
from connectors.models import Event, ExternalIdentity, Source


def source_list(*, tenant: Tenant) -> QuerySet[Source]:
    return (
        Source.objects.filter(tenant=tenant)
        .select_related("cursor")
        .annotate(
            last_event_at=Max("events__received_at"),
            event_count=Count("events"),
            pending_count=Count("events", filter=Q(events__state=Event.State.PENDING)),
        )
        .order_by("name")
    )


def _cursor_or_none(source: Source):
    try:
        return source.cursor
    except Source.cursor.RelatedObjectDoesNotExist:
        return None


def source_freshness(*, tenant: Tenant) -> dict[str, dict]:
    """Source name → {"state": ok|backoff|error|never, "last_synced_at": iso|None,
    "lag_seconds": int|None, "backoff_until": iso|None, "last_error": str, "stale": bool}."""
    now = timezone.now()
    result = {}
    for source in source_list(tenant=tenant):
        source.cursor_state = _cursor_or_none(source)
        result[source.name] = _state(source, now=now)
    return result


def source_state(source: Source, *, now=None) -> dict:
    """One source's sync state as `source_freshness` reports it: its cursor and, when the
    source was read with `last_event_at` annotated, its newest event (pushed and imported
    sources have no poll to succeed)."""
    source.cursor_state = _cursor_or_none(source)
    return _state(source, now=now or timezone.now())


def _state(source: Source, *, now) -> dict:
    cursor = source.cursor_state
    last_event_at = getattr(source, "last_event_at", None)
    last_success = cursor.last_success_at if cursor else None
    last_synced = max((t for t in (last_success, last_event_at) if t is not None), default=None)
    backoff_until = cursor.backoff_until if cursor else None
    if backoff_until is not None and backoff_until <= now:
        backoff_until = None
    if backoff_until is not None:
        state = "backoff"
    elif cursor is not None and cursor.consecutive_failures > 0:
        state = "error"
    elif last_synced is None:
        state = "never"
    else:
        state = "ok"
    lag = int((now - last_synced).total_seconds()) if last_synced else None
    return {
        "state": state,
        "last_synced_at": last_synced.isoformat() if last_synced else None,
        "lag_seconds": lag,
        "backoff_until": backoff_until.isoformat() if backoff_until else None,
        "last_error": cursor.last_error if cursor else "",
        "stale": lag is not None and lag > settings.SOURCE_LAG_WARNING_SECONDS,
    }


def source_rows(*, tenant: Tenant) -> list[dict]:
    """Rows of `GET /connectors`: each source with its sync state."""
    now = timezone.now()
    rows = []
    for source in source_list(tenant=tenant):
        source.cursor_state = _cursor_or_none(source)
        rows.append(
            {
                "name": source.name,
                "kind": source.kind,
                "enabled": source.enabled,
                "poll_minutes": source.poll_minutes,
                "events": source.event_count,
                "pending": source.pending_count,
                **_state(source, now=now),
            }
        )
    return rows


def event_item_history(*, event: Event) -> QuerySet[Event]:
    """All versions of the same item (source, external_id), oldest version first."""
    return Event.objects.filter(source_id=event.source_id, external_id=event.external_id).order_by("version")


def event_latest(*, tenant: Tenant, source_name: str, external_id: str) -> Event | None:
    return (
        Event.objects.filter(tenant=tenant, source__name=source_name, external_id=external_id)
        .order_by("-version")
        .first()
    )


def identity_user(*, tenant: Tenant, source_kind: str, handle: str):
    identity = (
        ExternalIdentity.objects.select_related("user")
        .filter(tenant=tenant, source_kind=source_kind, handle=handle)
        .first()
    )
    return identity.user if identity else None


def slack_present_messages(*, source: Source, channel_id: str, after: float, upto: float) -> set[str]:
    """Timestamps of the channel's top-level messages posted in (after, upto] that this source
    holds and has not seen deleted (replies are not in conversations.history, so not here)."""
    from datetime import UTC, datetime

    prefix = f"{channel_id}/"
    posted = Event.objects.filter(
        source=source,
        external_id__startswith=prefix,
        kind=Event.Kind.MESSAGE,
        occurred_at__gt=datetime.fromtimestamp(after, UTC),
        occurred_at__lte=datetime.fromtimestamp(upto, UTC),
    ).values_list("external_id", "thread_key")
    top_level = {eid for eid, thread in posted if thread == f"slack:thread:{eid}"}
    deleted = set(
        Event.objects.filter(
            source=source, external_id__in=top_level, kind=Event.Kind.MESSAGE_DELETED
        ).values_list("external_id", flat=True)
    )
    return {eid[len(prefix) :] for eid in top_level - deleted}
