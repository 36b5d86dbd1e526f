"""Governance in the admin: what the system holds about a user, lifecycle controls, department admins."""
