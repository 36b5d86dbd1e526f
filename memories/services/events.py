"""The payloads of the domain events memories send (`skills.signals.domain_event`; every
field in docs/llm.md, Events). Each says what happened with the text a skill needs, cut to
EVENT_TEXT_CHARS (`text_truncated` says so; the rest is read by id through the acting
user's access filter: `GET /memories/{id}`), who acted, the scope and its readers."""

from __future__ import annotations

from memories.models import Memory
from skills.events import actor_fields, bounded, scope_fields


def memory_fields(memory: Memory) -> dict:
    """One memory as an event names it: id, type, kind, its text (bounded), when."""
    text, truncated = bounded(memory.content)
    return {
        "memory_id": memory.pk,
        "memory_type": str(memory.memory_type),
        "kind": str(memory.kind),
        "text": text,
        "text_truncated": truncated,
        "occurred_at": memory.occurred_at.isoformat() if memory.occurred_at else None,
    }


def memory_created_payload(memory: Memory, *, user, reason: str) -> dict:
    return {
        "event_id": f"memory:{memory.pk}",
        **memory_fields(memory),
        "owner_id": memory.owner_id,
        **actor_fields(user),
        **scope_fields(memory.scope, memory.scope_key),
        "reason": reason,
    }


def memory_superseded_payload(memory: Memory, older: list[Memory], *, user, reason: str) -> dict:
    """The newer memory and the ones it replaced (the same scope: the same readers)."""
    return {
        "event_id": f"memory:{memory.pk}:supersedes:{','.join(str(m.pk) for m in older)}",
        **memory_fields(memory),
        "superseded": [memory_fields(previous) for previous in older],
        **actor_fields(user),
        **scope_fields(memory.scope, memory.scope_key),
        "reason": reason,
    }


def memory_hot_payload(memory: Memory, *, recalls: int, window_start, window_seconds: int) -> dict:
    """A memory recalled `recalls` times in the window that began at `window_start`."""
    return {
        "event_id": f"memory:{memory.pk}:hot:{int(window_start.timestamp())}",
        **memory_fields(memory),
        "owner_id": memory.owner_id,
        **actor_fields(memory.owner),
        **scope_fields(memory.scope, memory.scope_key),
        "recalls": recalls,
        "window_start": window_start.isoformat(),
        "window_seconds": window_seconds,
        "access_count": memory.access_count,
    }
