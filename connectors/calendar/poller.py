"""ICS feed poller (httpx + icalendar). Config: {"url"}; credentials optional (a bearer token
or {"username","password"} for basic auth). Conditional GET with the stored ETag /
Last-Modified, so an unchanged feed costs one 304.

Recurring events are expanded in a window that moves with time, so an unchanged feed still
has new occurrences: once a day (EXPAND_EVERY) the feed is fetched without the conditional
headers and expanded again. (The body is not kept in the cursor: a feed can be megabytes.)

The feed's URL is often the only secret (Google's "secret address", Outlook's published
link): errors name only its scheme and host, and httpx's INFO log of every request URL is
turned off (settings.LOGGING).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import httpx
from django.utils import timezone

from connectors.calendar.normalize import ics_payloads
from connectors.crypto import credentials_decode
from connectors.services.poller import PollError, http_error

EXPAND_EVERY = timedelta(days=1)
log = logging.getLogger(__name__)


def feed_label(url: str) -> str:
    """What errors may show of a feed URL: its scheme and host (no user, password, path or query)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "calendar feed"
    return f"{parts.scheme}://{host}{port}" if parts.scheme and host else "calendar feed"


def _detail(exc: Exception, url: str) -> str:
    """The exception's text unless it quotes a secret part of the URL; else only its type."""
    text = str(exc)
    try:
        parts = urlsplit(url)
        secrets = [url, parts.netloc if "@" in parts.netloc else "", parts.query, parts.path]
    except ValueError:
        secrets = [url]
    if not text or any(len(s) > 1 and s in text for s in secrets):
        return type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]


def _auth(source):
    value = credentials_decode(source.credentials) if source and source.credentials else ""
    if isinstance(value, dict) and value.get("username"):
        return httpx.BasicAuth(value["username"], value.get("password", "")), {}
    token = value.get("token", "") if isinstance(value, dict) else value
    return None, ({"Authorization": f"Bearer {token}"} if token else {})


def fetch_feed(url: str, *, source=None, cursor: dict | None = None) -> bytes | None:
    """The feed's bytes, or None when unchanged since `cursor` (304)."""
    auth, headers = _auth(source)
    cursor = cursor if cursor is not None else {}
    if cursor.get("etag"):
        headers["If-None-Match"] = cursor["etag"]
    if cursor.get("last_modified"):
        headers["If-Modified-Since"] = cursor["last_modified"]
    label = f"calendar {feed_label(url)}"
    try:
        response = httpx.get(url, headers=headers, auth=auth, timeout=30, follow_redirects=True)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        raise PollError(f"{label}: {_detail(exc, url)}") from exc
    if response.status_code == 304:
        return None
    if response.status_code >= 400:
        raise http_error(what=label, status=response.status_code, headers=response.headers)
    cursor["etag"] = response.headers.get("ETag", "")
    cursor["last_modified"] = response.headers.get("Last-Modified", "")
    return response.content


def _expansion_due(cursor: dict, now: datetime) -> bool:
    try:
        last = datetime.fromisoformat(cursor.get("expanded_at") or "")
    except (TypeError, ValueError):
        return True
    return last.tzinfo is None or now - last >= EXPAND_EVERY


def poll(*, source, cursor: dict, save) -> None:
    url = source.config.get("url")
    if not url:
        raise PollError("calendar: config.url is missing")
    now = timezone.now()
    if _expansion_due(cursor, now):  # fetch the whole feed: the window has moved
        cursor.pop("etag", None)
        cursor.pop("last_modified", None)
    data = fetch_feed(url, source=source, cursor=cursor)
    if data is None:
        save([], cursor)
        return
    try:
        payloads = list(ics_payloads(tenant=source.tenant, data=data, source_name=source.name, now=now))
    except ValueError as exc:
        # The parser's message quotes the feed (private events): the log only, not last_error,
        # which every agent key of the tenant can read.
        log.warning("calendar %s: not a valid ICS feed: %s", source, exc)
        raise PollError(f"calendar {feed_label(url)}: not a valid ICS feed") from exc
    cursor["expanded_at"] = now.isoformat()
    save(payloads, cursor)
