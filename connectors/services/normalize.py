"""What every tool's normalizer needs: stable ids and digests, ISO times, and a version
for sources whose items carry none."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

from almanac.models import Tenant
from connectors.models import Event


def digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def short_hash(value: str, n: int = 16) -> str:
    return hashlib.sha1(value.encode()).hexdigest()[:n]


def version_for_content(*, tenant: Tenant, source_name: str, external_id: str, content_digest: str) -> int:
    """A version for sources without one (notes, calendar files): the latest stored version
    when it has the same content (a re-import is a duplicate), else one past it (an edit; a
    revert to an earlier text too, which must win over the version it undoes). An id with
    a NUL byte is never stored (PostgreSQL refuses it in text): version 1, without a lookup,
    and the validator rejects the event."""
    if "\x00" in external_id or "\x00" in source_name:
        return 1
    versions = list(
        Event.objects.filter(tenant=tenant, source__name=source_name, external_id=external_id).values_list(
            "version", "raw__digest"
        )
    )
    latest, known = max(versions, default=(0, None))
    return latest if known == content_digest else latest + 1


def iso(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.isoformat()


def from_ts(ts: str | float) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=UTC)
