"""Input/output shapes of the connector API (docs/api.md, Connectors)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import urlsplit

from django.conf import settings
from ninja import Schema
from pydantic import ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from almanac.dates import MAX_YEAR, MIN_YEAR
from connectors.models import RESERVED_SOURCE_NAMES, Event

SOURCE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
CONTAINER_KEY_RE = re.compile(r"^[a-z][a-z0-9_-]*:.+$")
# Group namespaces that belong to the directory; a connector may never manage them.
RESERVED_NAMESPACES = ("tenant:", "dept:", "project:", "user:")
MAX_VERSION = 2**31 - 1
URL_SCHEMES = ("http", "https")


def _no_nul(value):
    if isinstance(value, str) and "\x00" in value:
        raise ValueError("NUL bytes are not allowed")
    if isinstance(value, list):
        for item in value:
            _no_nul(item)
    return value


class ContainerIn(Schema):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=3, max_length=300)
    name: str = Field("", max_length=300)
    members: list[str] | None = Field(None, max_length=20000)
    public: bool = False

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        _no_nul(value)
        if not CONTAINER_KEY_RE.match(value):
            raise ValueError("container.key must look like 'namespace:id', e.g. slack:channel:C123")
        if value.startswith(RESERVED_NAMESPACES):
            raise ValueError(
                "container.key may not use the directory namespaces tenant:, dept:, project:, user:"
            )
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _no_nul(value)

    @field_validator("members")
    @classmethod
    def _members(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        _no_nul(value)
        cleaned = []
        for member in value:
            member = member.strip()
            if not member or len(member) > 300:
                raise ValueError("each member must be a non-empty e-mail or handle of at most 300 characters")
            if member not in cleaned:
                cleaned.append(member)
        return cleaned


class TagsIn(Schema):
    model_config = ConfigDict(extra="forbid")

    customer: str | list[str] | None = None
    project: str | list[str] | None = None

    @field_validator("customer", "project")
    @classmethod
    def _tag(cls, value):
        _no_nul(value)
        items = [value] if isinstance(value, str) else (value or [])
        if any(len(v) > 200 for v in items):
            raise ValueError("a tag may have at most 200 characters")
        return value


MIN_EVENT_YEAR, MAX_EVENT_YEAR = MIN_YEAR, MAX_YEAR  # the rule memories share (almanac.dates)


def url_problem(value: str) -> str:
    """Why `value` is no link an event may carry ("" when it is one, or empty): an absolute
    http(s) address without spaces or control characters."""
    if not value:
        return ""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return "url may not contain spaces or control characters"
    parts = urlsplit(value)
    if parts.scheme.lower() not in URL_SCHEMES or not parts.netloc:
        return "url must be an absolute http:// or https:// address (or empty)"
    return ""


def link_or_empty(value: str, max_chars: int = 1000) -> str:
    """A link found in a source (front matter, a calendar's URL, a workspace address) if an
    event may carry it, else "": a bad link is dropped, never the event with it."""
    value = (value or "").strip()[:max_chars]
    return "" if url_problem(value) else value


class EventIn(Schema):
    """One normalized event. `raw` (the source's own payload) is optional."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=100)
    external_id: str = Field(min_length=1, max_length=500)
    version: int = Field(1, ge=1, le=MAX_VERSION)
    kind: Event.Kind
    occurred_at: datetime
    container: ContainerIn
    thread_key: str = Field("", max_length=500)
    author: str = Field("", max_length=300)
    title: str = Field("", max_length=500)
    text: str = ""  # at most CONNECTOR_EVENT_MAX_TEXT characters, read per event (`_text_length`)
    tags: TagsIn = Field(default_factory=TagsIn)
    url: str = Field("", max_length=1000)
    raw: dict = Field(default_factory=dict)

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        if not SOURCE_RE.match(value):
            raise ValueError("source must be letters, digits, '_', '.' or '-' (e.g. slack, hubspot)")
        if value.lower() in RESERVED_SOURCE_NAMES:
            raise ValueError(f"source '{value}' is a reserved name; pick another (e.g. hubspot)")
        return value

    @field_validator("text")
    @classmethod
    def _text_length(cls, value: str) -> str:
        """The limit is a setting read at call time; the error is pydantic's own max_length one."""
        limit = settings.CONNECTOR_EVENT_MAX_TEXT
        if len(value) > limit:
            raise PydanticCustomError(
                "string_too_long", "String should have at most {max_length} characters", {"max_length": limit}
            )
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        """Shown as a link in the web UI: only an absolute http(s) address, or nothing."""
        problem = url_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("external_id", "thread_key", "author", "title", "text", "url")
    @classmethod
    def _text(cls, value: str) -> str:
        return _no_nul(value)

    @field_validator("occurred_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        value = value if value.tzinfo else value.replace(tzinfo=UTC)
        # Far from the ends of the calendar: 9999-12-31T23:59-10:00 is year 10000 in UTC,
        # which PostgreSQL keeps but no reader can load, and dates next to year 1 or 9999
        # break local-time display and the admin's date navigation.
        try:
            year = value.astimezone(UTC).year
        except OverflowError:
            year = 0
        if not MIN_EVENT_YEAR <= year <= MAX_EVENT_YEAR:
            raise ValueError(f"occurred_at must lie between the years {MIN_EVENT_YEAR} and {MAX_EVENT_YEAR}")
        return value


class IngestOut(Schema):
    accepted: int
    duplicates: int


class ConnectorSourceOut(Schema):
    name: str
    kind: str
    enabled: bool
    poll_minutes: int
    state: str
    last_synced_at: datetime | None
    lag_seconds: int | None
    backoff_until: datetime | None
    last_error: str
    stale: bool
    mode: str = "push"  # poll: expected to deliver on a schedule; push: webhooks, pushes, imports
    reason: str = ""  # why it is stale, in short ("" when it is not)
    events: int
    pending: int
