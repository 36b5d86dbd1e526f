"""Slack: the normalizer (messages, channels, people), the export importer, the Web API
poller and the Events API webhook."""
