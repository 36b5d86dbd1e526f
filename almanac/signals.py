"""Signals of the base layer: what the apps above it follow (docs/design.md, Identity and access)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent (by almanac.services.users, inside its transaction) when a personal key moves to a
# new name (`new_key`) or is retired (`new_key=None`: its user is being deleted, `user`, or
# it was left by a former one): every app whose `acl` can hold `user:` keys follows it.
# Arguments: tenant_id, old_key, new_key, user.
personal_key_changed = Signal()

# Sent by context.services after each context call an agent (API, MCP) or the web preview
# made, for metrics to record off the request path (receivers must only queue it).
# Arguments: tenant_id, user_id, agent_key_id, session_id, via, task, passes, at,
# latency_ms, tokens, memory_ids, section_ids, page_ids.
context_served = Signal()
