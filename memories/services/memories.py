"""Direct writes of memories: create (with the near-duplicate check), update, delete
(feedback: `memories.services.feedback`; purge: `memories.services.purge`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db import transaction

from almanac.dates import check_year
from almanac.errors import ApplicationError
from almanac.search.embeddings import embed
from almanac.text.claims import claim
from almanac.text.duplicates import says_the_same
from memories.constants import DEDUP_CANDIDATES
from memories.models import Memory, MemoryLink
from memories.permissions import can_modify
from memories.selectors import nearest
from memories.services.common import clean_text
from memories.services.revocation import (
    originals_release,
    originals_release_unsaid,
    summaries_release,
)
from memories.services.rows import (
    keyed,
    lock_tenant_writes,
    memory_audit,
    memory_content_apply,
    memory_insert,
    memory_row_delete,
)
from memories.services.scopes import scope_resolve
from memories.services.supersede import memory_claim, memory_supersede_older, supersede_release


def _check_importance(value: float) -> float:
    if value is None or not 0.0 <= float(value) <= 1.0:
        raise ApplicationError("importance must be between 0 and 1", status_code=422)
    return float(value)


def memory_find_duplicate(
    *,
    tenant_id: int,
    acl_key: str,
    vector,
    exclude_id: int | None = None,
    content: str | None = None,
    memory_type: str | None = None,
    occurred_at: date | None = None,
) -> Memory | None:
    """An active memory of the same scope that says the same: cosine similarity above the
    threshold and, when `content` is given, the same facts, not reordered, not another
    value of the same thing (`almanac.text.duplicates.says_the_same`); for an
    episodic `memory_type`, also the same `occurred_at` (the same event on another day is
    another event).

    Embeddings put "Apollo deploys on Tuesdays" and "... on Thursdays" above 0.92: without
    the fact check the second would be dropped as a duplicate of the first.
    """
    qs = Memory.objects.filter(tenant_id=tenant_id, status=Memory.Status.ACTIVE, acl__overlap=[acl_key])
    if exclude_id:
        qs = qs.exclude(pk=exclude_id)
    threshold = settings.MEMORY_DEDUP_THRESHOLD
    close = [
        pk
        for pk, distance in nearest(qs, vector, DEDUP_CANDIDATES, tenant_id=tenant_id)
        if 1.0 - distance > threshold
    ]
    if not close:
        return None
    rows = Memory.objects.only("id", "content", "occurred_at").in_bulk(close)
    dated = memory_type == Memory.Type.EPISODIC
    for pk in close:
        row = rows.get(pk)
        if row is None or (dated and row.occurred_at != occurred_at):
            continue
        if content is None or says_the_same(content, row.content):
            return Memory.objects.get(pk=pk)
    return None


def _check_kind(kind: str | None) -> str | None:
    if kind and kind not in Memory.Kind.values:
        raise ApplicationError(f"unknown kind {kind!r}", status_code=422)
    return kind or None


@dataclass(frozen=True)
class MemoryDraft:
    """A new memory's arguments as `memory_create_check` checked and completed them."""

    content: str
    memory_type: str
    scope: str
    scope_key: str | None
    importance: float
    meta: dict
    occurred_at: date | None
    kind: str | None
    key: str | None


def memory_create_check(
    *,
    owner,
    content: str,
    memory_type: str,
    scope: str,
    scope_key: str | None,
    importance: float,
    meta: dict | None,
    occurred_at: date | None,
    kind: str | None,
    key: str | None,
) -> MemoryDraft:
    """`memory_create`'s arguments checked, in this order (ApplicationError for the first
    that is wrong), and completed: `key` read from `meta["key"]` when not given, the scope
    resolved for `owner`."""
    content = clean_text(content, field="content", max_chars=settings.MEMORY_MAX_CONTENT_CHARS)
    if memory_type not in Memory.Type.values:
        raise ApplicationError(f"unknown memory_type {memory_type!r}", status_code=422)
    importance = _check_importance(importance)
    check_year(occurred_at, "occurred_at")
    kind = _check_kind(kind)
    meta = meta or {}
    if key is None and isinstance(meta.get("key"), str):
        key = meta["key"]
    scope, scope_key = scope_resolve(user=owner, scope=scope, scope_key=scope_key)
    return MemoryDraft(content, memory_type, scope, scope_key, importance, meta, occurred_at, kind, key)


@transaction.atomic
def memory_create(
    *,
    owner,
    content: str,
    memory_type: str = Memory.Type.SEMANTIC,
    scope: str = Memory.Scope.USER,
    scope_key: str | None = None,
    importance: float = 0.5,
    meta: dict | None = None,
    occurred_at: date | None = None,
    reason: str = "api",
    embedding=None,
    actor=None,
    kind: str | None = None,
    key: str | None = None,
) -> tuple[Memory, Memory | None]:
    """Write a memory, or return the near-duplicate already in the same scope; a new one
    supersedes the active memories of its scope that state another value for the same
    thing (`memories.services.supersede`).

    `actor`: who writes it when that is not its owner (an admin), named in its history and
    the audit log. `kind`: fact, preference, ... (default: read from `meta.fact_type` and
    the text). `key`: what it states a value of (subject + attribute), when the caller
    knows it (an extractor); also read from `meta["key"]`; default: read from the text.

    Returns `(memory, duplicate_of)`: `duplicate_of` is the existing memory (and `memory`
    is it too) when one with cosine > MEMORY_DEDUP_THRESHOLD and the same facts (numbers
    with their units, ids, dates, weekdays, negation; for an episodic memory the same
    `occurred_at`) exists in the scope.
    """
    draft = memory_create_check(
        owner=owner,
        content=content,
        memory_type=memory_type,
        scope=scope,
        scope_key=scope_key,
        importance=importance,
        meta=meta,
        occurred_at=occurred_at,
        kind=kind,
        key=key,
    )
    return memory_create_do(
        owner=owner, draft=draft, embedding=embedding, actor=actor or owner, reason=reason
    )


def memory_create_do(
    *, owner, draft: MemoryDraft, embedding, actor, reason: str
) -> tuple[Memory, Memory | None]:
    """Write a checked memory (`memory_create_check`), or return the near-duplicate already
    in its scope; see `memory_create`."""
    tenant_id = owner.profile.tenant_id
    vector = embedding if embedding is not None else embed([draft.content])[0]
    lock_tenant_writes(tenant_id)
    existing = memory_find_duplicate(
        tenant_id=tenant_id,
        acl_key=Memory.acl_key(draft.scope, draft.scope_key),
        vector=vector,
        content=draft.content,
        memory_type=draft.memory_type,
        occurred_at=draft.occurred_at,
    )
    if existing is not None:
        return existing, existing
    found = memory_claim(content=draft.content, key=draft.key)
    memory = memory_insert(
        tenant_id=tenant_id,
        owner=owner,
        scope=draft.scope,
        scope_key=draft.scope_key,
        memory_type=draft.memory_type,
        content=draft.content,
        embedding=vector,
        importance=draft.importance,
        occurred_at=draft.occurred_at,
        meta=draft.meta,
        kind=draft.kind,
        fact_key=found.key if found is not None else "",
        history_user=actor,
        reason=reason,
    )
    memory_audit(
        action="memory.create",
        memory=memory,
        user=actor,
        memory_id=memory.pk,
        detail={"reason": reason},
        after=draft.content,
    )
    memory_supersede_older(memory=memory, found=found, user=actor, reason=reason)
    return memory, None


def _rekey(memory: Memory) -> list[str]:
    """Its key again, from its text now (an edit is the memory's own correction: it
    supersedes nothing, a newer memory may supersede it)."""
    found = claim(memory.content) if keyed(memory.memory_type, memory.kind) else None
    key = found.key if found is not None else ""
    if key == memory.fact_key:
        return []
    memory.fact_key = key
    return ["fact_key"]


def _check_status(status: str) -> str:
    """`active` or `archived`: `compressed` belongs to compression (an original its summary
    holds; the daily job deletes those after the keep period), `superseded` to a newer
    memory of the same thing."""
    if status not in (Memory.Status.ACTIVE, Memory.Status.ARCHIVED):
        raise ApplicationError(
            "status may be set to 'active' or 'archived' only; 'compressed' is set by compression, "
            "'superseded' by a newer memory of the same thing",
            status_code=422,
        )
    return status


def _apply_status(memory: Memory, status: str) -> list[str]:
    """A compressed original set to another status leaves its summary (no longer linked); a
    superseded one is no longer replaced by its successor."""
    if status == memory.status:
        return []
    if memory.status == Memory.Status.COMPRESSED:
        MemoryLink.objects.filter(source_id=memory.pk, kind=MemoryLink.Kind.COMPRESSED_INTO).delete()
    memory.status = status
    if memory.superseded_by_id is not None:
        memory.superseded_by = None
        return ["status", "superseded_by"]
    return ["status"]


def _check_scope(*, memory: Memory, user, data: dict, scope_user) -> tuple[str, str | None]:
    """The (scope, scope key) `memory` moves to, resolved for whoever moves it."""
    scope = data.get("scope") or memory.scope
    # `user` scope is the owner's private one, whoever moves the memory there.
    mover = memory.owner if scope == Memory.Scope.USER else (scope_user or user)
    if mover is None:
        raise ApplicationError(
            "this memory's author was deleted: it has no private scope to move to", status_code=409
        )
    scope, key = scope_resolve(user=mover, scope=scope, scope_key=data.get("scope_key"))
    if [Memory.acl_key(scope, key)] != memory.acl and (memory.meta or {}).get("source") == "compression":
        # Its text is other people's memories of this scope: moved, it would show them
        # to readers they were never written for.
        raise ApplicationError(
            "a compression summary stays in the scope of the memories it folds in; "
            "restore those and move them instead",
            status_code=409,
        )
    return scope, key


def memory_update_check(*, memory: Memory, user, data: dict, scope_user=None) -> dict:
    """The changes `data` asks of `memory` (as locked now), checked in this order
    (ApplicationError for the first that may not be made): {field: new value} for content
    (cleaned), kind, importance, status, scope ((scope, scope key)), meta and occurred_at."""
    changes: dict = {}
    if data.get("content") is not None:
        changes["content"] = clean_text(
            data["content"], field="content", max_chars=settings.MEMORY_MAX_CONTENT_CHARS
        )
    if data.get("kind") is not None and data["kind"] != memory.kind:
        changes["kind"] = _check_kind(data["kind"])
    if data.get("importance") is not None:
        changes["importance"] = _check_importance(data["importance"])
    if data.get("status") is not None:
        changes["status"] = _check_status(data["status"])
    if data.get("scope") is not None or data.get("scope_key") is not None:
        changes["scope"] = _check_scope(memory=memory, user=user, data=data, scope_user=scope_user)
    if data.get("meta") is not None:
        changes["meta"] = data["meta"]
    if data.get("occurred_at") is not None and data["occurred_at"] != memory.occurred_at:
        if memory.memory_type != Memory.Type.EPISODIC:
            raise ApplicationError("only an episodic memory has a date (occurred_at)", status_code=422)
        check_year(data["occurred_at"], "occurred_at")
        changes["occurred_at"] = data["occurred_at"]
    return changes


def _apply_changes(memory: Memory, changes: dict) -> list[str]:
    """Set checked `changes` on `memory` (not saved); returns the fields changed."""
    changed: list[str] = []
    if "content" in changes:
        changed += memory_content_apply(memory, changes["content"])
        if changed:
            changed += _rekey(memory)
    if "kind" in changes:
        memory.kind = changes["kind"]
        changed += ["kind", *_rekey(memory)]
    if "importance" in changes:
        memory.importance = changes["importance"]
        changed.append("importance")
    if "status" in changes:
        changed += _apply_status(memory, changes["status"])
    if "scope" in changes:
        scope, key = changes["scope"]
        memory.scope, memory.scope_key, memory.acl = scope, key, [Memory.acl_key(scope, key)]
        changed += ["scope", "scope_key", "acl"]
    for name in ("meta", "occurred_at"):
        if name in changes:
            setattr(memory, name, changes[name])
            changed.append(name)
    return changed


def memory_update_do(*, memory: Memory, user, changes: dict, reason: str) -> None:
    """Apply checked changes (`memory_update_check`) to the locked `memory`, save and audit them."""
    before = memory.content
    changed = _apply_changes(memory, changes)
    if not changed:
        return
    memory._history_user = user
    memory._change_reason = reason
    memory.save(update_fields=[*dict.fromkeys(changed), "updated_at"])
    # Which fields, never what they say (a purge could not take it back out of here).
    fields = sorted(set(changed) - {"embedding", "embedding_e5", "tokens", "tf", "doc_len", "acl"})
    memory_audit(
        action="memory.update",
        memory=memory,
        user=user,
        memory_id=memory.pk,
        detail={"reason": reason, "fields": fields},
        before=before,
        after=memory.content,
    )


@transaction.atomic
def memory_update(*, memory: Memory, user, data: dict, reason: str = "api", scope_user=None) -> Memory:
    """Change content (re-embedded, re-indexed), importance, status or scope (acl recomputed).

    A new dept/project scope must be one `scope_user` (default: the acting user) belongs to;
    `user` scope is the owner's own. A summary this memory was compressed into stops saying it when its
    scope or content changes (`summaries_release`, in this transaction).
    """
    if not can_modify(user=user, memory=memory, perm="change_memory"):
        raise ApplicationError("only the owner or a governor may change this memory", status_code=403)
    lock_tenant_writes(memory.tenant_id)
    memory = (
        Memory.objects.select_related("owner").select_for_update(of=("self",)).filter(pk=memory.pk).first()
    )
    if memory is None:  # deleted while this call waited for the lock
        raise ApplicationError("memory not found", status_code=404)
    before = (memory.acl[0], memory.content)
    changes = memory_update_check(memory=memory, user=user, data=data, scope_user=scope_user)
    memory_update_do(memory=memory, user=user, changes=changes, reason=reason)
    if (memory.acl[0], memory.content) != before:
        summaries_release(items={memory.pk: (memory.tenant_id, before[0])}, user=user, reason=reason)
        if memory.content != before[1]:  # a summary rewritten speaks only for what it still says
            originals_release_unsaid(summary=memory, user=user, reason=reason)
        memory.refresh_from_db(fields=["status"])
    return memory


@transaction.atomic
def memory_delete(*, memory: Memory, user, reason: str = "api") -> bool:
    """Delete a memory (owner, or `memories.delete_memory` globally or on this object);
    False when it was gone already (deleted meanwhile, e.g. with its summary).

    Its history stays (an admin can see and revert what it said); `memory_purge` removes that too.
    """
    if not can_modify(user=user, memory=memory, perm="delete_memory"):
        raise ApplicationError("only the owner or a governor may delete this memory", status_code=403)
    return memory_remove(memory=memory, user=user, reason=reason)


@transaction.atomic
def memory_remove(*, memory: Memory, user, reason: str, purge: bool = False) -> bool:
    """Delete a memory (no permission check) and audit it; False (nothing done) when it is
    gone already. A summary it was compressed into stops saying it; if it is a summary, its
    compressed originals come back (their text is theirs, not lost with it). `purge`: those
    summaries' history loses the text as well."""
    # The tenant's write lock, then the row's: of two concurrent deletes (or purges) of one
    # memory, the second waits, then finds it gone and changes nothing (it used to subtract
    # the memory from the keyword statistics a second time).
    lock_tenant_writes(memory.tenant_id)
    if not Memory.objects.select_for_update().filter(pk=memory.pk).values_list("pk", flat=True).first():
        return False
    memory_id, items = memory.pk, {memory.pk: (memory.tenant_id, memory.acl[0])}
    originals_release(summary=memory, user=user, reason=reason)
    supersede_release(successor=memory, user=user, reason=reason)
    memory_row_delete(memory=memory, user=user, reason=reason)
    summaries_release(items=items, user=user, reason=reason, purge=purge)
    if not purge:
        memory_audit(
            action="memory.delete",
            memory=memory,
            user=user,
            memory_id=memory_id,
            detail={"reason": reason},
            before=memory.content,
        )
    return True
