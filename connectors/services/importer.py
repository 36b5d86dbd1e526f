"""What importers share: they read real export formats (`connectors/<tool>/importer.py`)
and yield normalized events (docs/api.md shape); `ingest_all` stores them.

Every importer yields payload dicts; `ingest_all` feeds them to `event_ingest` one by one
(so later events can refer to earlier ones, e.g. an e-mail recall to its original) and
counts what was new. Re-running an import only counts duplicates.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from django.db import DataError
from tqdm import tqdm

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.services.ingest import event_ingest

log = logging.getLogger(__name__)


def ingest_all(
    *,
    tenant: Tenant,
    payloads: Iterable[dict],
    progress: bool = False,
    desc: str = "",
    members_observed_at: datetime | None = None,
) -> dict:
    """Ingest one by one. An event the validator refuses (e.g. a message over the size limit),
    one the database refuses (DataError: a value PostgreSQL cannot store), or an
    ApplicationError an importer yields for an item it could not read, is skipped, logged
    and counted in "rejected" (with the last reason), so one bad item cannot block an import
    or a poller forever; each event is its own transaction (a savepoint inside a poll page).

    Member lists are dated by `members_observed_at` when the caller read them live (a poller
    passes the start of its poll), else by their item's own time: an export's lists are as
    old as the export, and must not undo a removal made since (docs/connectors.md)."""
    observed = members_observed_at
    counts = {"accepted": 0, "duplicates": 0}
    rejected, reason = 0, ""
    for payload in tqdm(payloads, desc=desc or "events", unit="event", disable=not progress, leave=False):
        if isinstance(payload, ApplicationError):  # an importer's item it could not read
            rejected, reason = rejected + 1, payload.message
            log.warning("skipped an item: %s", payload.message)
            continue
        try:
            _, created = event_ingest(tenant=tenant, payload=payload, members_observed_at=observed)
        except (ApplicationError, DataError) as exc:
            message = exc.message if isinstance(exc, ApplicationError) else _first_line(exc)
            rejected, reason = rejected + 1, message
            log.warning("skipped %s %s: %s", payload.get("source"), payload.get("external_id"), message)
            continue
        counts["accepted" if created else "duplicates"] += 1
    if rejected:
        counts.update(rejected=rejected, last_rejection=reason)
    return counts


def _first_line(exc: Exception) -> str:
    # The database's reason, without the SQL statement it quotes.
    text = str(exc.__cause__ or exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
