"""Recording context calls off the request path (docs/operations.md, "Metrics").

The `context_served` receiver only appends the call's values to a write buffer (a list
append on the request path); the buffer's flush, seconds later in a daemon thread, folds
the task, writes the `ContextCall` rows in one INSERT and counts the calls and their latency
in the Prometheus instruments. A crash loses at most METRICS_FLUSH_SECONDS of records.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from django.conf import settings
from django.contrib.auth import get_user_model

from almanac.buffer import WriteBuffer
from almanac.models import Tenant
from memories.models import ConversationSession
from metrics.models import ContextCall

User = get_user_model()

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)
FIELDS = (
    "tenant_id",
    "user_id",
    "agent_key_id",
    "session_id",
    "via",
    "task",
    "passes",
    "at",
    "latency_ms",
    "tokens",
    "memory_ids",
    "section_ids",
    "page_ids",
)


def task_normalised(task: str) -> str:
    """Lower case, full-width folded (NFKC), punctuation and runs of spacing as one space."""
    return _PUNCT.sub(" ", unicodedata.normalize("NFKC", task).lower()).strip()


def task_digest(normalised: str) -> str:
    return hashlib.sha256(normalised.encode()).hexdigest()


def call_row(values: dict) -> ContextCall:
    task = task_normalised(values["task"])
    return ContextCall(**{**values, "task": task, "task_digest": task_digest(task)})


def still_there(batch: list[dict]) -> list[dict]:
    """The records whose user still exists, without a session deleted since (one INSERT
    must not fail for the whole batch because of a row deleted meanwhile)."""
    users = set(User.objects.filter(pk__in={v["user_id"] for v in batch}).values_list("pk", flat=True))
    sessions = {v["session_id"] for v in batch if v["session_id"] is not None}
    sessions = set(ConversationSession.objects.filter(pk__in=sessions).values_list("pk", flat=True))
    return [
        {**values, "session_id": values["session_id"] if values["session_id"] in sessions else None}
        for values in batch
        if values["user_id"] in users
    ]


def _write(batch: list[dict]) -> int:
    from metrics.instruments import CONTEXT_CALLS, CONTEXT_LATENCY

    rows = ContextCall.objects.bulk_create([call_row(values) for values in still_there(batch)])
    slugs = dict(Tenant.objects.filter(pk__in={r.tenant_id for r in rows}).values_list("pk", "slug"))
    for row in rows:
        CONTEXT_CALLS.labels(tenant=slugs.get(row.tenant_id, ""), via=row.via).inc()
        CONTEXT_LATENCY.labels(via=row.via).observe(row.latency_ms / 1000)
    return len(rows)


_buffer = WriteBuffer("context calls", _write, lambda: settings.METRICS_FLUSH_SECONDS)


def record(**values) -> None:
    _buffer.add([{name: values[name] for name in FIELDS}])


def flush() -> int:
    return _buffer.flush()
