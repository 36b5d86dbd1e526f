"""Outcome metrics: whether memory helps (docs/operations.md, "Metrics"), `/metrics` for Prometheus and the admin dashboard."""
