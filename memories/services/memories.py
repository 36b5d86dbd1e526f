"""Direct writes of memories: create (with the near-duplicate check), update, delete, purge, feedback."""

from __future__ import annotations

from datetime import date

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q

from almanac.dates import check_year
from almanac.errors import ApplicationError
from almanac.search.embeddings import embed
from almanac.search.text import is_cjk
from almanac.text.claims import claim
from almanac.text.duplicates import says_the_same
from memories.constants import DEDUP_CANDIDATES, QUALITY_MAX, QUALITY_MIN, QUALITY_STEP
from memories.models import Feedback, Memory, MemoryAuditText, MemoryLink
from memories.selectors import nearest
from memories.services.common import clean_text
from memories.services.revocation import (
    expired_folded,
    originals_release,
    originals_release_unsaid,
    summaries_release,
)
from memories.services.rows import (
    PURGED,
    history_scrub,
    keyed,
    lock_tenant_writes,
    memory_audit,
    memory_content_apply,
    memory_insert,
    memory_row_delete,
)
from memories.services.scopes import scope_resolve
from memories.services.supersede import memory_claim, memory_supersede_older, supersede_release
from skills.services import skillrun_redact


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
    tenant_id = owner.profile.tenant_id
    acl_key = Memory.acl_key(scope, scope_key)
    vector = embedding if embedding is not None else embed([content])[0]
    lock_tenant_writes(tenant_id)
    existing = memory_find_duplicate(
        tenant_id=tenant_id,
        acl_key=acl_key,
        vector=vector,
        content=content,
        memory_type=memory_type,
        occurred_at=occurred_at,
    )
    if existing is not None:
        return existing, existing
    found = memory_claim(content=content, key=key)
    memory = memory_insert(
        tenant_id=tenant_id,
        owner=owner,
        scope=scope,
        scope_key=scope_key,
        memory_type=memory_type,
        content=content,
        embedding=vector,
        importance=importance,
        occurred_at=occurred_at,
        meta=meta,
        kind=kind,
        fact_key=found.key if found is not None else "",
        history_user=actor or owner,
        reason=reason,
    )
    memory_audit(
        action="memory.create",
        memory=memory,
        user=actor or owner,
        memory_id=memory.pk,
        detail={"reason": reason},
        after=content,
    )
    memory_supersede_older(memory=memory, found=found, user=actor or owner, reason=reason)
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


def can_modify(*, user, memory: Memory, perm: str) -> bool:
    return (
        memory.owner_id == user.pk
        or user.has_perm(f"memories.{perm}")
        or user.has_perm(f"memories.{perm}", memory)
    )


def _apply_status(memory: Memory, status: str) -> list[str]:
    """`active` or `archived`: `compressed` belongs to compression (an original its summary
    holds; the daily job deletes those after the keep period), `superseded` to a newer
    memory of the same thing. A compressed original set to another status leaves its
    summary (no longer linked); a superseded one is no longer replaced by its successor."""
    if status not in (Memory.Status.ACTIVE, Memory.Status.ARCHIVED):
        raise ApplicationError(
            "status may be set to 'active' or 'archived' only; 'compressed' is set by compression, "
            "'superseded' by a newer memory of the same thing",
            status_code=422,
        )
    if status == memory.status:
        return []
    if memory.status == Memory.Status.COMPRESSED:
        MemoryLink.objects.filter(source_id=memory.pk, kind=MemoryLink.Kind.COMPRESSED_INTO).delete()
    memory.status = status
    if memory.superseded_by_id is not None:
        memory.superseded_by = None
        return ["status", "superseded_by"]
    return ["status"]


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
    changed: list[str] = []
    if data.get("content") is not None:
        changed += memory_content_apply(memory, data["content"])
        if changed:
            changed += _rekey(memory)
    if data.get("kind") is not None and data["kind"] != memory.kind:
        memory.kind = _check_kind(data["kind"])
        changed += ["kind", *_rekey(memory)]
    if data.get("importance") is not None:
        memory.importance = _check_importance(data["importance"])
        changed.append("importance")
    if data.get("status") is not None:
        changed += _apply_status(memory, data["status"])
    if data.get("scope") is not None or data.get("scope_key") is not None:
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
        memory.scope, memory.scope_key, memory.acl = scope, key, [Memory.acl_key(scope, key)]
        changed += ["scope", "scope_key", "acl"]
    if data.get("meta") is not None:
        memory.meta = data["meta"]
        changed.append("meta")
    if data.get("occurred_at") is not None and data["occurred_at"] != memory.occurred_at:
        if memory.memory_type != Memory.Type.EPISODIC:
            raise ApplicationError("only an episodic memory has a date (occurred_at)", status_code=422)
        check_year(data["occurred_at"], "occurred_at")
        memory.occurred_at = data["occurred_at"]
        changed.append("occurred_at")
    if changed:
        memory._history_user = user
        memory._change_reason = reason
        memory.save(update_fields=[*dict.fromkeys(changed), "updated_at"])
        # Which fields, never what they say (a purge could not take it back out of here).
        fields = sorted(set(changed) - {"embedding", "tokens", "tf", "doc_len", "acl"})
        memory_audit(
            action="memory.update",
            memory=memory,
            user=user,
            memory_id=memory.pk,
            detail={"reason": reason, "fields": fields},
            before=before[1],
            after=memory.content,
        )
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


@transaction.atomic
def memory_purge(*, memory: Memory, user, reason: str = "purge") -> dict:
    """Delete a sensitive memory and what still says it (docs/design.md, Governance): its history rows keep
    who changed what and when but lose the text and meta, so do the history rows of the
    summaries that ever folded it in, skill runs that quote any text it ever had are
    redacted, and an audit event without the content records the purge. A summary's
    originals that expired (whose facts live on only in it) lose their history text too.

    Same permission as delete. The conversation turns a session memory came from are the
    session's own record and are not touched (delete the session for that).
    """
    if not can_modify(user=user, memory=memory, perm="delete_memory"):
        raise ApplicationError("only the owner or a governor may purge this memory", status_code=403)
    memory_id = memory.pk
    # The tenant's write lock before anything is read: an edit or an expiry between reading
    # what to scrub and deleting would leave its text unscrubbed.
    lock_tenant_writes(memory.tenant_id)
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None:
        raise ApplicationError("memory not found (deleted meanwhile)", status_code=404)
    # 1. Every text it ever had: an edit before the purge leaves the old one in the run log
    #    (the compress run that folded it in) and in the history of its summary.
    texts = _texts_ever(memory)
    # A summary also says what its expired originals said (they live on only in it, and in
    # their own history and the compress run's input): purged with it.
    expired = expired_folded(memory.meta)
    # 2. Delete it; the summaries that fold it in now are rewritten or retired, history scrubbed.
    if not memory_remove(memory=memory, user=user, reason=reason, purge=True):
        raise ApplicationError("memory not found (deleted meanwhile)", status_code=404)
    # 3. Its own history, and that of summaries it left earlier (released by that edit).
    history = history_scrub(memory_id=memory_id, reason=reason)
    history += sum(history_scrub(memory_id=pk, reason=reason) for pk in expired)
    texts |= {text for text in expired.values() if _said(text)}
    scrubbed, summary_texts = _summaries_history_scrub(
        tenant_id=memory.tenant_id, memory_id=memory_id, texts=texts, reason=reason
    )
    # 4. The skill runs that quote any of it.
    #    A short text ("ok") would match runs that never saw this memory: not searched for.
    quoted = {text for text in texts if _specific(text)} | summary_texts
    runs = sum(skillrun_redact(contains=text, tenant=memory.tenant) for text in quoted)
    # 5. The texts beside its audit events, and beside others' that quote it (a memory it
    #    superseded or was superseded by, a summary's compress event).
    audited = _audit_texts_scrub(
        tenant_id=memory.tenant_id, memory_ids={memory_id, *expired}, texts=texts | summary_texts
    )
    # 6. What other logs kept of it: the admin's "Recent actions" (the first 60 characters
    #    of a memory edited there) and django-q's task log (arguments and results).
    said = texts | summary_texts
    logged = _admin_log_scrub(memory_ids={memory_id, *expired}, texts=said)
    tasks = _task_log_scrub(texts={text for text in said if _specific(text)})
    # 7. Caches hold copies nobody can list by content: emptied once the purge commits.
    transaction.on_commit(cache.clear)
    counts = {
        "history_rows": history + scrubbed,
        "skill_runs": runs,
        "audit_texts": audited,
        "admin_log": logged,
        "task_log": tasks,
    }
    memory_audit(
        action="memory.purge",
        memory=memory,
        user=user,
        memory_id=memory_id,
        detail={"reason": reason, **counts},
    )
    return counts


def _admin_log_scrub(*, memory_ids: set[int], texts: set[str]) -> int:
    """Admin log entries of `memory_ids`, and any entry whose text quotes one of `texts`
    (its first 60 characters, as a memory's name is shown there), lose that text."""
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    kind = ContentType.objects.get_for_model(Memory)
    ids = [str(pk) for pk in memory_ids]
    which = Q(content_type=kind, object_id__in=ids)
    for text in texts:
        if _specific(text):
            which |= Q(object_repr__contains=text[:60]) | Q(change_message__contains=text[:60])
    rows = LogEntry.objects.filter(which).exclude(object_repr=PURGED, change_message="")
    return rows.update(object_repr=PURGED, change_message="")


def _task_log_scrub(*, texts: set[str]) -> int:
    """django-q's log of finished tasks keeps their arguments and results (pickled, so no
    query can search them): the entries that quote one of `texts` are deleted."""
    from django_q.models import Task

    if not texts:
        return 0
    quoting = []
    for task in Task.objects.only("id", "args", "kwargs", "result").iterator(chunk_size=500):
        seen = repr((task.args, task.kwargs, task.result))
        if any(text in seen or repr(text)[1:-1] in seen for text in texts):
            quoting.append(task.pk)
    return Task.objects.filter(pk__in=quoting).delete()[0]


def _audit_texts_scrub(*, tenant_id: int, memory_ids: set[int], texts: set[str]) -> int:
    """The audit texts of `memory_ids`, and those quoting one of `texts`, become "[purged]"
    (their events keep the digests)."""
    which = Q(memory_id__in=list(memory_ids))
    for text in texts:
        if _specific(text):
            which |= Q(before__contains=text) | Q(after__contains=text)
    rows = MemoryAuditText.objects.filter(which, tenant_id=tenant_id).exclude(before=PURGED, after=PURGED)
    return rows.update(before=PURGED, after=PURGED)


# Below this (a CJK character counting 2), a text is too common to find by containment.
MIN_REDACT_WEIGHT = 8


def _specific(text: str) -> bool:
    return sum(2 if is_cjk(c) else 1 for c in text.strip()) >= MIN_REDACT_WEIGHT


def _said(text: str | None) -> bool:
    return bool(text and text.strip()) and text != PURGED


def _texts_ever(memory: Memory) -> set[str]:
    """The distinct contents `memory` has had: now and in its history."""
    past = Memory.history.filter(id=memory.pk).values_list("content", flat=True).distinct()
    return {text for text in [memory.content, *past] if _said(text)}


def _summaries_history_scrub(
    *, tenant_id: int, memory_id: int, texts: set[str], reason: str
) -> tuple[int, set[str]]:
    """Scrub the history rows of compression summaries that folded `memory_id` in (directly,
    or through a summary that did): the versions that list it, and their other versions
    that quote one of `texts`; returns (how many, their texts). Other summaries are not
    touched, whatever they say: a text can be another memory's words too.

    A summary keeps its meta (ids only) so that a later purge still finds what it folded in.
    """
    rows = Memory.history.filter(tenant_id=tenant_id, meta__source="compression")
    folded, frontier = set(), {memory_id}
    while frontier:  # summaries of summaries
        listing = Q()
        for pk in frontier:
            listing |= Q(meta__compressed_from__contains=[pk])
        found = set(rows.filter(listing).values_list("id", flat=True)) - folded
        folded |= found
        frontier = found
    folding = Q()
    for pk in folded | {memory_id}:
        folding |= Q(meta__compressed_from__contains=[pk])
    for text in texts:  # their other versions that still quote it (rewritten, released)
        folding |= Q(id__in=folded, content__contains=text)
    saying = rows.filter(folding).exclude(content=PURGED)
    summary_texts = {text for text in saying.values_list("content", flat=True).distinct() if _said(text)}
    return saying.update(content=PURGED, history_change_reason=reason), summary_texts


@transaction.atomic
def memory_feedback(*, memory: Memory, user, signal: str) -> Feedback:
    """Move the memory's quality: adopted up, ignored/corrected down, kept within [0.2, 2.0].

    Each user's opinion counts once: the same signal again from the same user is recorded
    but moves nothing (one reader sending "ignored" over and over would otherwise bury a
    memory the whole department relies on); a changed signal replaces that user's earlier
    one (its step is undone, the new one applied), so alternating signals cannot ratchet it.
    """
    if signal not in QUALITY_STEP:
        raise ApplicationError(f"unknown signal {signal!r}", status_code=422)
    memory = Memory.objects.select_for_update().filter(pk=memory.pk).first()
    if memory is None:  # deleted since the caller read it
        raise ApplicationError("memory not found", status_code=404)
    before = memory.quality
    last = Feedback.objects.filter(memory=memory, user=user).order_by("-created_at", "-id").first()
    if last is None or last.signal != signal:
        step = QUALITY_STEP[signal]
        if last is not None and last.signal in QUALITY_STEP:
            step /= QUALITY_STEP[last.signal]
        memory.quality = round(min(QUALITY_MAX, max(QUALITY_MIN, before * step)), 4)
        memory._history_user = user
        memory._change_reason = f"feedback:{signal}"
        memory.save(update_fields=["quality", "updated_at"])
    return Feedback.objects.create(
        memory=memory, user=user, signal=signal, quality_before=before, quality_after=memory.quality
    )
