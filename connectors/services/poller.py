"""Pollers: one per source kind (`connectors/<tool>/poller.py`), run by
`connectors.tasks.source_poll_task`.

A poller is `poll(*, source, cursor: dict, save) -> None`. It reads the source from the
stored cursor on, and after every page/batch calls `save(payloads, cursor)`, which stores
those events and the new cursor in one transaction: a crash or a rate limit mid-way resumes
from the last saved page, and nothing is applied twice. It raises `RateLimited` on HTTP 429
(with Retry-After) and `PollError` on other failures; both back the source off exponentially.

An item the poller cannot read (a malformed e-mail, a note with broken front matter) must not
stop it: the poller logs it, moves its cursor past it and calls `save(..., rejected=1)`, so
it is counted as rejected like an event the validator refuses.
"""

from __future__ import annotations

import logging
import math
from email.utils import parsedate_to_datetime

from django.db import OperationalError, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from connectors.crypto import credentials_decode
from connectors.models import Source, SyncCursor
from connectors.services import importer, ingest
from connectors.services.sources import sync_cursor_save, sync_failure, sync_success

log = logging.getLogger(__name__)

POLLERS = {
    Source.Kind.SLACK: "connectors.slack.poller.poll",
    Source.Kind.GITHUB: "connectors.github.poller.poll",
    Source.Kind.EMAIL: "connectors.email.poller.poll",
    Source.Kind.CALENDAR: "connectors.calendar.poller.poll",
    Source.Kind.NOTES: "connectors.notes.poller.poll",
}


class PollError(Exception):
    """A failed poll (5xx, auth, protocol). The source backs off exponentially."""


class RateLimited(PollError):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(headers) -> float | None:
    """Retry-After in seconds (delay-seconds or an HTTP-date), or None when absent or not a
    usable value ("nan", "inf", negative, garbage): the backoff is then exponential."""
    for name, value in dict(headers or {}).items():
        if name.lower() == "retry-after":
            return _retry_after(str(value))
    return None


def _retry_after(value: str) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        try:  # an HTTP-date; a naive one (-0000) cannot be compared: TypeError
            return max((parsedate_to_datetime(value.strip()) - timezone.now()).total_seconds(), 0.0)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def http_error(*, what: str, status: int, headers=None, detail: str = "") -> PollError:
    message = f"{what}: HTTP {status}" + (f" {detail}" if detail else "")
    if status == 429:
        return RateLimited(message, retry_after_seconds(headers))
    return PollError(message)


def secret(source: Source, field: str = "token") -> str:
    value = credentials_decode(source.credentials)
    if isinstance(value, dict):
        return str(value.get(field) or "")
    return value


# What a source needs before it is polled: a Slack source used only for the Events API
# (config.team_id, no token) and a GitHub source used only for webhooks (config.repos to match
# deliveries, no token) are never polled; `"poll": true` polls public repos without a token,
# `"poll": false` turns polling off for any source.
REQUIRED = {
    Source.Kind.SLACK: lambda s: bool(s.credentials),
    Source.Kind.GITHUB: lambda s: (
        bool(s.config.get("repos")) and (bool(s.credentials) or s.config.get("poll") is True)
    ),
    Source.Kind.EMAIL: lambda s: bool(s.config.get("host")),
    Source.Kind.CALENDAR: lambda s: bool(s.config.get("url")),
    Source.Kind.NOTES: lambda s: bool(s.config.get("folder")),
}


def is_pollable(source: Source) -> bool:
    config = source.config if isinstance(source.config, dict) else {}
    return source.kind in POLLERS and config.get("poll") is not False and REQUIRED[source.kind](source)


def _page_store(*, source: Source, payloads: list, cursor: dict, observed) -> dict:
    """Store a page's events and the cursor in one transaction. The groups whose members the
    page sets are locked first, in key order; a deadlock with another writer rolls the page
    back, and it is stored again (ATTEMPTS in all, then the poll fails and backs off)."""
    for attempt in range(ingest.ATTEMPTS):
        try:
            with transaction.atomic():
                ingest.event_groups_lock(tenant=source.tenant, payloads=payloads)
                result = importer.ingest_all(
                    tenant=source.tenant, payloads=payloads, members_observed_at=observed
                )
                sync_cursor_save(source=source, cursor=cursor)
            return result
        except OperationalError as exc:
            if not ingest.is_deadlock(exc) or attempt == ingest.ATTEMPTS - 1:
                raise
            log.info("poll of %s: a page met a concurrent writer (deadlock), storing it again", source)
            ingest.deadlock_pause(attempt)
    raise AssertionError("unreachable")


def poll_source(*, source: Source, force: bool = False) -> dict:
    """Run the source's poller once and record success or failure (with backoff).

    Returns {"accepted", "duplicates", "state"} (+ "rejected" when items were skipped as
    invalid). Skips a source in backoff unless `force`.
    """
    state, _ = SyncCursor.objects.get_or_create(source=source)
    if not force and state.backoff_until and state.backoff_until > timezone.now():
        return {"accepted": 0, "duplicates": 0, "state": "backoff"}
    counts = {"accepted": 0, "duplicates": 0}
    # Member lists read in this poll show the containers as they are now, whatever the age
    # of the items they come with: they are dated by the poll's start (read before any list).
    observed = timezone.now()

    def save(payloads: list[dict], cursor: dict, *, rejected: int = 0) -> None:
        result = _page_store(source=source, payloads=list(payloads), cursor=cursor, observed=observed)
        counts["accepted"] += result["accepted"]
        counts["duplicates"] += result["duplicates"]
        # Skipped items (refused by the validator, or unreadable to the poller, which logged
        # them): visible in the result and the log.
        rejected += result.get("rejected", 0)
        if rejected:
            counts["rejected"] = counts.get("rejected", 0) + rejected

    poller = import_string(POLLERS[source.kind])
    try:
        poller(source=source, cursor=dict(state.cursor or {}), save=save)
    except RateLimited as exc:
        sync_failure(source=source, error=str(exc), retry_after=exc.retry_after)
        return {**counts, "state": "backoff"}
    except Exception as exc:  # noqa: BLE001 - any failure must show in the sync state, never silently
        log.warning("poll of %s failed: %s", source, exc, exc_info=not isinstance(exc, PollError))
        sync_failure(
            source=source,
            error=f"{type(exc).__name__}: {exc}" if not isinstance(exc, PollError) else str(exc),
        )
        return {**counts, "state": "backoff"}
    sync_success(source=source)
    return {**counts, "state": "ok"}
