"""Export and purge of everything the system holds about one user (docs/operations.md,
Roles), as the requesting admin may see it; both audited."""

from __future__ import annotations

import csv
import io
import json

from django.db import transaction

from almanac.errors import ApplicationError
from almanac.services.audit import audit_record
from governance.permissions import may_read_sessions
from governance.selectors import user_groups, user_own_memories, user_sessions
from memories.models import ConversationSession, Memory, Turn
from memories.services.purge import memory_purge
from metrics.models import ContextCall

MEMORY_FIELDS = ["id", "memory_type", "kind", "scope", "scope_key", "content", "importance", "status",
                 "created_at", "updated_at"]  # fmt: skip
CSV_COLUMNS = ["section", "id", "at", "what", "text", "detail"]


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def _memory_row(memory: Memory) -> dict:
    row = {f: getattr(memory, f) for f in MEMORY_FIELDS}
    return {**row, "created_at": _iso(memory.created_at), "updated_at": _iso(memory.updated_at)}


def _sessions(user) -> list[dict]:
    turns = Turn.objects.filter(session__user=user).order_by("session_id", "order")
    by_session: dict[int, list] = {}
    for turn in turns:
        by_session.setdefault(turn.session_id, []).append({"role": turn.role, "content": turn.content})
    return [
        {"id": s.pk, "title": s.title, "started_at": _iso(s.started_at), "turns": by_session.get(s.pk, [])}
        for s in user_sessions(user=user)
    ]


def user_export_data(request, *, user) -> dict:
    """Everything about `user` the requesting admin may see: profile, access groups, own
    memories, recent agent calls, and (superusers) conversations."""
    profile = user.profile
    data = {
        "user": {
            "id": user.pk,
            "handle": user.username,
            "name": profile.username,
            "tenant": profile.tenant.slug,
            "email": user.email,
            "display_name": profile.display_name,
            "title": profile.title,
            "departments": sorted(d.name for d in profile.departments.all()),
            "projects": sorted(p.name for p in profile.projects.all()),
        },  # fmt: skip
        "groups": [
            {"key": g.key, "kind": g.kind, "source": g.source, "since": _iso(g.since)}
            for g in user_groups(user=user)
        ],
        "memories": [_memory_row(m) for m in user_own_memories(request, user=user).defer("embedding")],
        "context_calls": [
            {
                "id": c.pk,
                "at": _iso(c.at),
                "via": c.via,
                "task": c.task,
                "memory_ids": c.memory_ids,
                "section_ids": c.section_ids,
            }  # fmt: skip
            for c in ContextCall.objects.filter(user=user).order_by("-at")
        ],
    }
    if may_read_sessions(request.user):
        data["sessions"] = _sessions(user)
    return data


def _csv_rows(data: dict):
    yield {"section": "user", "id": data["user"]["id"], "what": data["user"]["name"],
           "detail": json.dumps(data["user"], ensure_ascii=False)}  # fmt: skip
    for g in data["groups"]:
        yield {"section": "group", "id": g["key"], "at": g["since"], "what": g["source"]}
    for m in data["memories"]:
        detail = {k: m[k] for k in ("scope", "scope_key", "importance", "kind")}
        yield {"section": "memory", "id": m["id"], "at": m["created_at"], "what": m["status"],
               "text": m["content"], "detail": json.dumps(detail, ensure_ascii=False)}  # fmt: skip
    for c in data["context_calls"]:
        yield {"section": "context_call", "id": c["id"], "at": c["at"], "what": c["via"], "text": c["task"],
               "detail": json.dumps({"memory_ids": c["memory_ids"], "section_ids": c["section_ids"]})}  # fmt: skip
    for s in data.get("sessions", []):
        for i, turn in enumerate(s["turns"]):
            yield {"section": "session_turn", "id": f"{s['id']}/{i}", "at": s["started_at"],
                   "what": turn["role"], "text": turn["content"]}  # fmt: skip


def user_export_csv(data: dict) -> str:
    """One CSV of every section, with a byte-order mark: Excel then reads Chinese as UTF-8."""
    out = io.StringIO()
    out.write("\ufeff")
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerows(_csv_rows(data))
    return out.getvalue()


def user_export(request, *, user, fmt: str) -> dict:
    """The export's data, audited as `user.export` (counts only, never content)."""
    data = user_export_data(request, user=user)
    audit_record(
        action="user.export",
        tenant_id=user.profile.tenant_id,
        actor=request.user.get_username(),
        object_type="user",
        object_id=user.pk,
        detail={"format": fmt, **{k: len(v) for k, v in data.items() if isinstance(v, list)}},
    )
    return data


def user_purge(request, *, user) -> dict:
    """Purge every memory of `user` the admin may see (`memory_purge`: history, skill runs
    and audit texts too), their agent-call records and (superusers) their conversations.
    Returns the counts, audited as `user.purge`; a memory the purge refuses is counted."""
    done = refused = 0
    for memory in list(user_own_memories(request, user=user).defer("embedding")):
        try:
            memory_purge(memory=memory, user=request.user, reason="admin:user-purge")
            done += 1
        except ApplicationError:
            refused += 1
    with transaction.atomic():
        counts = {
            "memories": done,
            "refused": refused,
            "context_calls": ContextCall.objects.filter(user=user).delete()[0],
        }
        if may_read_sessions(request.user):
            _, deleted = user_sessions(user=user).delete()
            counts["sessions"] = deleted.get(ConversationSession._meta.label, 0)
        audit_record(
            action="user.purge",
            tenant_id=user.profile.tenant_id,
            actor=request.user.get_username(),
            object_type="user",
            object_id=user.pk,
            detail=counts,
        )
    return counts
