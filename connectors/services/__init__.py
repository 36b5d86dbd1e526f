"""Writes of the connectors app. `event_ingest` is the one way an event enters Almanac."""

from connectors.services.identity import identity_resolve, identity_upsert, identity_upsert_many
from connectors.services.ingest import event_ingest, event_ingest_batch, event_validate
from connectors.services.sources import (
    source_ensure,
    source_reset_backoff,
    source_set_credentials,
    sync_cursor_save,
    sync_failure,
    sync_success,
)

__all__ = [
    "event_ingest",
    "event_ingest_batch",
    "event_validate",
    "identity_resolve",
    "identity_upsert",
    "identity_upsert_many",
    "source_ensure",
    "source_reset_backoff",
    "source_set_credentials",
    "sync_cursor_save",
    "sync_failure",
    "sync_success",
]
