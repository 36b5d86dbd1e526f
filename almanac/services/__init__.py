"""Writes of the base layer: tenancy, users, agent keys, audit (one module each)."""
