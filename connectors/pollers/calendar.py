"""ICS feed poller (httpx + icalendar). Config: {"url"}; credentials optional (a bearer token
or {"username","password"} for basic auth). Conditional GET with the stored ETag /
Last-Modified, so an unchanged feed costs one 304."""

from __future__ import annotations

import httpx

from connectors.crypto import credentials_decode
from connectors.importers.calendar import ics_payloads
from connectors.pollers import PollError, http_error


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
    try:
        response = httpx.get(url, headers=headers, auth=auth, timeout=30, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise PollError(f"calendar {url}: {exc}") from exc
    if response.status_code == 304:
        return None
    if response.status_code >= 400:
        raise http_error(what=f"calendar {url}", status=response.status_code, headers=response.headers)
    cursor["etag"] = response.headers.get("ETag", "")
    cursor["last_modified"] = response.headers.get("Last-Modified", "")
    return response.content


def poll(*, source, cursor: dict, save) -> None:
    url = source.config.get("url")
    if not url:
        raise PollError("calendar: config.url is missing")
    data = fetch_feed(url, source=source, cursor=cursor)
    if data is None:
        save([], cursor)
        return
    try:
        payloads = list(ics_payloads(tenant=source.tenant, data=data, source_name=source.name))
    except ValueError as exc:
        raise PollError(f"calendar {url}: not a valid ICS feed: {exc}") from exc
    save(payloads, cursor)
