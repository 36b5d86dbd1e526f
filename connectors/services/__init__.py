"""Writes of the connectors app, and the machinery every tool shares: `ingest` (the one way
an event enters Almanac), `membership`, `identity`, `sources` (cursor and backoff),
`importer` and `normalize` (what importers build on), `poller` (the poller registry and
the poll loop) and `webhook` (what webhook receivers share)."""
