"""Connector settings that live in this app (read from the environment)."""

from almanac.env import envint

# Exponential backoff of a failing poller: BASE * 2**(failures-1), capped at MAX seconds.
BACKOFF_BASE_SECONDS = envint("CONNECTOR_BACKOFF_BASE_SECONDS", 60)
BACKOFF_MAX_SECONDS = envint("CONNECTOR_BACKOFF_MAX_SECONDS", 6 * 3600)
# Slack: how far back every poll re-reads history, so late thread replies and edits are caught.
SLACK_REREAD_HOURS = envint("SLACK_REREAD_HOURS", 24)
# Largest `text` accepted on an event, in characters; raw payload size in bytes.
EVENT_MAX_TEXT = envint("CONNECTOR_EVENT_MAX_TEXT", 1_000_000)
EVENT_MAX_RAW_BYTES = envint("CONNECTOR_EVENT_MAX_RAW_BYTES", 1_000_000)
EVENT_MAX_BATCH = envint("CONNECTOR_EVENT_MAX_BATCH", 1000)
# Webhook requests older than this are refused as replays.
WEBHOOK_MAX_AGE_SECONDS = 300
