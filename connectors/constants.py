"""Fixed values of the connectors app (its configurable ones are in `config.settings`)."""

# Webhook requests older than this are refused as replays (Slack signs the request time).
WEBHOOK_MAX_AGE_SECONDS = 300
