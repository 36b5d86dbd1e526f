"""Reads of the connectors app: sources with their freshness, event history."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from almanac.models import Tenant
from connectors.models import Event, Source


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
    """Source name → {"state": ok|backoff|error|never, "mode": poll|push, "last_synced_at":
    iso|None, "lag_seconds": int|None, "backoff_until": iso|None, "last_error": str (operators
    only), "reason": short text for agents ("" when fine), "stale": bool (lagging)}."""
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


# What an agent is told about a failing source: a short reason, never the error itself
# (which may name hosts, accounts or a library's internals); operators read `last_error`.
FAILURE_REASONS = (
    (("HTTP 429", "rate limit", "ratelimited"), "rate limited by the service"),
    (("HTTP 401", "HTTP 403"), "authentication failed"),
    (("HTTP 5",), "the service answered with an error"),
    (("connect", "timeout", "timed out", "network", "resolve", "unreachable", "ssl", "eof"),
     "cannot reach the service"),
    (("auth", "login", "credential", "token", "password"), "authentication failed"),
)  # fmt: skip


def failure_reason(error: str) -> str:
    """A short, fixed reason for a sync failure (`FAILURE_REASONS`), whatever the error says."""
    lowered = (error or "").lower()
    for needles, reason in FAILURE_REASONS:
        if any(n.lower() in lowered for n in needles):
            return reason
    return "sync failed"


def _polled(source: Source) -> bool:
    """Is the source expected to deliver by polling (enabled, with a poller and what it
    needs)? Sources fed by imports, pushes or webhooks are not: quiet is not late for them."""
    from connectors.services.poller import is_pollable

    return source.enabled and is_pollable(source)


def _state(source: Source, *, now) -> dict:
    """The sync state. `stale` (lagging) only when the source was expected to deliver: its
    poller is in backoff or failing, or has not succeeded within its interval plus
    `SOURCE_LAG_WARNING_SECONDS`. A quiet webhook, push or import source is never stale."""
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
    polled = _polled(source)
    reason = ""
    if state in ("backoff", "error"):
        reason = failure_reason(cursor.last_error)
    elif polled:
        since = last_success or source.created_at
        allowed = source.poll_minutes * 60 + settings.SOURCE_LAG_WARNING_SECONDS
        if since is not None and (now - since).total_seconds() > allowed:
            reason = "behind its polling schedule" if last_success else "no successful poll yet"
    return {
        "state": state,
        "mode": "poll" if polled else "push",
        "last_synced_at": last_synced.isoformat() if last_synced else None,
        "lag_seconds": lag,
        "backoff_until": backoff_until.isoformat() if backoff_until else None,
        "last_error": cursor.last_error if cursor else "",
        "reason": reason,
        "stale": bool(reason),
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
