"""A small domain-event bus: `publish(event, payload)` enqueues the subscribed skills.

Subscribers are (a) code subscriptions in `skills.registry` (`subscribe(...)` from an
AppConfig.ready, or a built-in's `events`) and (b) enabled `Skill` rows whose `events`
list the event (prompt-only skills added in admin). Each delivery is one django-q2 task
enqueued after the surrounding transaction commits (a rolled-back one enqueues nothing).

Delivery keys are deterministic: sha256 of (event, the event's own identity — its
payload's `event_id` —, skill name, skill version), so the same event published twice,
or its task retried, runs a skill once (`skills.tasks.skill_event_task` skips a key it
ran). A new version of a skill is a new key: it runs on events announced again.

Who a run is for (docs/llm.md, Events): a code subscription and a skill whose output stays
with the event (the run log, the event's own scope, a section with the event's readers)
run for the event's own readers and get the whole payload. A prompt skill that keeps its
output in another scope runs for that scope's readers: it gets the event only when all of
them may read the event's text (its `acl`), and a list of items that carry their own `acl`
(page.updated's `sections`) only with the items they may read; nothing left, no run.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django_q.tasks import async_task

from almanac.selectors import user_group_keys
from skills import registry
from skills.models import Skill

# The events skills may subscribe to; each payload is documented field by field in
# docs/llm.md (Events). Every payload has `event_id`, the event's own identity.
EVENTS = {
    "session.ended": "a user's conversation session ended: its turns, bounded",
    "memory.created": "a memory was written (not a duplicate): its text, bounded",
    "memory.superseded": "a newer memory replaced older ones of its scope: both texts",
    "memory.hot": "a memory was recalled MEMORY_HOT_RECALLS times within a window",
    "fact.confirmed": "stale (recalled) page sections were confirmed current",
    "document.uploaded": "a document's text was read (or a connector brought a meeting note)",
    "page.updated": "a wiki compile changed a page's sections: each with its excerpt and readers",
}


def event_identity(payload: dict) -> str:
    """The event's own identity: the sender's `event_id`, else the digest of the payload."""
    if payload.get("event_id"):
        return str(payload["event_id"])
    from skills.services import canonical_json

    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def delivery_key(*, event: str, identity: str, skill: str, version: str) -> str:
    """The delivery key of one (event, skill, version): 64 hex characters."""
    return hashlib.sha256("\x1f".join([event, identity, skill, version]).encode()).hexdigest()


def subscribers(event: str) -> list[str]:
    """Skill names that run on `event` (code subscriptions first, then admin-defined)."""
    return [row.name for row in _subscribed(event)]


def _subscribed(event: str) -> list[Skill]:
    """The subscribed skills' rows, in one query (a code subscription's row unsaved when it
    has none yet): sent for every page a compile changes, so it stays cheap."""
    names = [sub.skill for sub in registry.code_subscriptions(event)]
    admin = Q(enabled=True, builtin=False, events__contains=[event])
    rows = {row.name: row for row in Skill.objects.filter(Q(name__in=names) | admin)}
    code = [row for row in (rows.get(name) or _code_row(name) for name in names) if row.enabled]
    others = [row for name, row in sorted(rows.items()) if name not in names]
    return code + others


def _code_row(name: str) -> Skill:
    builtin = registry.get_builtin(name)
    return Skill(name=name, version=builtin.version if builtin else "1", builtin=True)


def publish(event: str, payload: dict, *, tenant_id: int | None = None) -> list[str]:
    """Enqueue every skill subscribed to `event` once the current transaction commits, each
    with the payload its run may see (`payload_for`). Returns the delivery keys."""
    identity = event_identity(payload)
    keys = []
    for row in _subscribed(event):
        seen = payload_for(row, payload)
        if seen is None:
            continue
        key = delivery_key(event=event, identity=identity, skill=row.name, version=row.version)
        keys.append(key)
        transaction.on_commit(
            lambda name=row.name, key=key, seen=seen: async_task(
                "skills.tasks.skill_event_task",
                name,
                event,
                seen,
                tenant_id,
                key,
                task_name=f"skill:{name}:{event}",
            )
        )
    return keys


# --- Who a run is for --------------------------------------------------------------------


def payload_for(row: Skill, payload: dict) -> dict | None:
    """What skill `row` is given of `payload`: all of it when it runs for the event's own
    readers; else only what every reader of its output scope may read (None: nothing)."""
    readers = run_readers(row, payload)
    if readers is None:
        return payload
    if "acl" in payload:
        return payload if _may_read(payload["acl"], readers) else None
    narrowed, kept = dict(payload), 0
    for field, value in payload.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) and "acl" in v for v in value):
            narrowed[field] = [item for item in value if _may_read(item["acl"], readers)]
            kept += len(narrowed[field])
    return narrowed if kept else None


def run_readers(row: Skill, payload: dict) -> tuple[str, list[str]] | None:
    """Who reads what skill `row` keeps from a run on `payload`: None for the event's own
    readers; ("group", [key]) for every member of a group; ("user", their keys) for the
    acting user alone (("user", []) when the event names none: nobody)."""
    if row.builtin or row.output_to != Skill.OutputTo.MEMORY:
        return None
    scope, _, key = (row.output_scope or "").strip().partition(":")
    if not scope:
        return None
    if scope == "user" or scope not in ("dept", "project", "tenant"):
        user = get_user_model().objects.filter(pk=payload.get("user_id") or 0).first()
        return "user", user_group_keys(user) if user is not None else []
    return "group", [f"{scope}:{key.strip()}"] if scope != "tenant" else ["tenant:"]


def _may_read(acl, readers: tuple[str, list[str]]) -> bool:
    """May all of `readers` read a text with readers `acl`? A group may read what its own
    key or the whole tenant may (events never cross tenants); a user, what one of theirs may."""
    acl = [key for key in acl or [] if isinstance(key, str)]
    kind, keys = readers
    if kind == "user":
        return bool(set(acl) & set(keys))
    tenant_wide = any(key.startswith("tenant:") for key in acl)
    return tenant_wide or (keys[0] != "tenant:" and keys[0] in acl)
