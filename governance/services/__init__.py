"""Governance writes: a user's export and purge, lifecycle runs."""
