"""Compression (docs/design.md, Memories): many active memories on one topic become one summary memory.

The topics and their summaries are `memories.services.topics`'. Each group of a topic
becomes one new memory when a summary shorter than the group (in tokens) says every one of
its facts (`summary_for`). The originals the summary says (`summary_holds`) become
`compressed`, are linked to it (`compressed_into`) and can be restored for
MEMORY_COMPRESSED_KEEP_DAYS, after which the daily job deletes those its summary still holds
and puts the others back to active.

A summary says what its originals said, to the readers of their scope. When an original
is deleted, purged, moved to another scope or rewritten, `summaries_release`
(`memories.services.revocation`) makes its summaries stop saying it in the same transaction.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db import transaction
from django.db.models import CharField, Count, Q
from django.db.models.expressions import RawSQL

from almanac.search.embeddings import embed
from almanac.search.tokens import count_tokens
from almanac.text.summaries import SummaryTerms, summary_holds, summary_terms
from memories.models import Memory, MemoryLink
from memories.services.common import log
from memories.services.lifecycle import (
    Lifecycle,
    days_ago,
    lifecycle_defaults,
    lifecycle_overrides,
    lifecycle_q,
)
from memories.services.revocation import EXPIRED_REASON, expired_folded, summary_redo
from memories.services.rows import (
    lock_tenant_writes,
    memory_audit,
    memory_insert,
    memory_row_delete,
    memory_set_status,
)
from memories.services.topics import Summary, summary_for, summary_groups, topics
from memories.topics import covers, tokens_of

# The history reason of a compressed original put back to active because no summary holds it.
KEPT_REASON = "job:compressed-kept"


@transaction.atomic
def memory_compress_topic(
    *, memories: list[Memory], reason: str = "job:compress", topic: str = ""
) -> Memory | None:
    """Merge `memories` (one scope) into one new memory; the originals become `compressed`.

    None (nothing written) when no summary is shorter than they are (`summary_for`), or
    when any of them changed while the skill ran (deleted, moved to another scope,
    rewritten, archived): the summary would say what that one no longer may, where it no
    longer may. The next run compresses what is there then.
    """
    memories = sorted(memories, key=lambda m: (m.created_at, m.pk))
    first, texts = memories[0], [m.content for m in memories]
    made = summary_for(texts, tenant=first.tenant, reason=reason)
    if made is None:
        log.info("compress: no summary of %s memories is shorter than they are; nothing done", len(texts))
        return None
    summary = made.text
    # Only what the summary says is compressed (`covers`); the rest stays active, unlinked.
    missing = set(covers(summary, texts))
    held = [m for i, m in enumerate(memories) if i not in missing]
    if not held:
        log.warning("compress: the summary of %s memories holds none of them; nothing done", len(memories))
        transaction.set_rollback(True)  # nor its run log: see below
        return None
    vector = embed([summary])[0]  # before the lock: writers of the tenant wait on it
    lock_tenant_writes(first.tenant_id)
    if _changed(memories):
        # Its run log (written in this transaction) holds the old texts: a purge that came
        # while the skill ran could not redact a row it could not see yet, so it goes.
        transaction.set_rollback(True)
        return None
    return _summary_write(memories=memories, held=held, made=made, vector=vector, reason=reason, topic=topic)


def _changed(memories: list[Memory]) -> bool:
    """Has any of `memories` changed since it was read (locked now, until the transaction ends)?"""
    now = {
        pk: rest
        for pk, *rest in Memory.objects.select_for_update()
        .filter(pk__in=[m.pk for m in memories])
        .order_by("pk")
        .values_list("pk", "updated_at", "acl", "status")
    }
    # A rename re-keys rows without touching updated_at: the scope is compared as well.
    return any(now.get(m.pk) != [m.updated_at, m.acl, Memory.Status.ACTIVE] for m in memories)


def _summary_write(
    *, memories: list[Memory], held: list[Memory], made: Summary, vector, reason: str, topic: str
) -> Memory:
    """The summary memory of `memories` written; the originals it holds compressed and linked to it."""
    first, summary = memories[0], made.text
    ids, held_ids = [m.pk for m in memories], [m.pk for m in held]
    memory_set_status(
        memories=Memory.objects.filter(pk__in=held_ids),
        status=Memory.Status.COMPRESSED,
        user=None,
        reason=reason,
    )
    merged = memory_insert(
        tenant_id=first.tenant_id,
        owner_id=_summary_owner(memories),
        scope=first.scope,
        scope_key=first.scope_key,
        memory_type=Memory.Type.SEMANTIC,
        content=summary,
        embedding=vector,
        importance=max(m.importance for m in memories),
        meta={"source": "compression", "compressed_from": ids, "method": made.method},
        history_user=None,
        reason=reason,
    )
    MemoryLink.objects.bulk_create(
        [MemoryLink(source_id=pk, target=merged, kind=MemoryLink.Kind.COMPRESSED_INTO) for pk in held_ids]
    )
    memory_audit(
        action="memory.compress",
        memory=merged,
        user=None,
        memory_id=merged.pk,
        detail={
            "originals": len(held_ids),
            "kept_active": len(ids) - len(held_ids),
            "method": made.method,
            "topic": topic,
            "tokens_before": made.tokens_before,
            "tokens_after": made.tokens_after,
        },
        before="\n".join(m.content for m in held),
        after=summary,
    )
    return merged


def _summary_owner(memories: list[Memory]) -> int | None:
    """Whoever wrote most of it (a deleted author only when no one else did)."""
    owners = Counter(m.owner_id for m in memories if m.owner_id is not None) or Counter([None])
    return max(owners, key=lambda pk: (owners[pk], max(m.created_at for m in memories if m.owner_id == pk)))


def _crowded_scopes(
    *, tenant_id: int | None = None, acl_key: str | None = None
) -> list[tuple[int, str, int]]:
    """(tenant id, acl key, its tenant's COMPRESS_MIN) of scopes with more active semantic
    memories than their tenant's COMPRESS_MIN (`memories.services.lifecycle`)."""
    rows = Memory.objects.filter(status=Memory.Status.ACTIVE, memory_type=Memory.Type.SEMANTIC)
    if tenant_id is not None:
        rows = rows.filter(tenant_id=tenant_id)
    if acl_key is not None:
        rows = rows.filter(acl=[acl_key])
    least = lifecycle_defaults().compress_min
    mins = {t: lifecycle.compress_min for t, lifecycle in lifecycle_overrides().items()}
    counts = (
        rows.annotate(key=RawSQL('"memories_memory"."acl"[1]', [], output_field=CharField()))
        .values("tenant_id", "key")
        .annotate(n=Count("id"))
        .filter(n__gt=min([least, *mins.values()]))
        .values_list("tenant_id", "key", "n")
    )
    return [(t, key, mins.get(t, least)) for t, key, n in counts if n > mins.get(t, least)]


@dataclass
class Planned:
    """One group compression takes on: its scope (acl key), topic, memories and the tokens
    they cost; after a run, the summary written (None: nothing written)."""

    tenant_id: int
    acl_key: str
    topic: str
    memories: list[Memory]
    tokens_before: int
    tokens_after: int | None = None
    method: str = ""
    summary: Memory | None = None


def compression_plan(*, tenant_id: int | None = None, acl_key: str | None = None) -> list[Planned]:
    """The groups a run would compress now, each with its tokens; writes nothing."""
    plan = []
    for tenant, key, least in _crowded_scopes(tenant_id=tenant_id, acl_key=acl_key):
        rows = list(
            Memory.objects.filter(
                tenant_id=tenant,
                status=Memory.Status.ACTIVE,
                memory_type=Memory.Type.SEMANTIC,
                acl=[key],
            ).order_by("created_at", "id")
        )
        for topic in topics(rows, more_than=least):
            if len(topic.memories) <= least:
                continue
            for group in summary_groups(topic.memories):
                before = tokens_of([m.content for m in group])
                plan.append(Planned(tenant, key, topic.term, group, before))
    return plan


def memories_compress_run(
    *, tenant_id: int | None = None, acl_key: str | None = None, dry_run: bool = False
) -> list[Planned]:
    """Compress every topic with more than COMPRESS_MIN members (of one tenant, one scope);
    `dry_run`: only say what would be written (the structured summary's tokens: no LLM is
    called and nothing is written)."""
    plan = compression_plan(tenant_id=tenant_id, acl_key=acl_key)
    for planned in plan:
        texts = [m.content for m in planned.memories]
        if dry_run:
            made = summary_for(texts, tenant=None, reason="dry-run", use_skill=False)
            if made is not None:
                planned.tokens_after, planned.method = made.tokens_after, made.method
            continue
        planned.summary = memory_compress_topic(memories=planned.memories, topic=planned.topic)
        if planned.summary is not None:
            detail = planned.summary.meta
            planned.method = detail.get("method", "")
            planned.tokens_after = count_tokens(planned.summary.content)
    return plan


def memories_compress(*, tenant_id: int | None = None) -> int:
    """Compress every topic with more than COMPRESS_MIN members; returns how many summaries."""
    return sum(1 for planned in memories_compress_run(tenant_id=tenant_id) if planned.summary is not None)


@transaction.atomic
def memory_restore(*, memories, user, reason: str = "admin:restore") -> int:
    """Compressed originals back to active; a summary whose originals are all back is archived."""
    for tenant_id in sorted(set(memories.values_list("tenant_id", flat=True))):
        lock_tenant_writes(tenant_id)  # before any row: a delete of the summary locks it, then these
    originals = list(memories.filter(status=Memory.Status.COMPRESSED))
    ids = [m.pk for m in originals]
    summary_ids = set(
        MemoryLink.objects.filter(source_id__in=ids, kind=MemoryLink.Kind.COMPRESSED_INTO).values_list(
            "target_id", flat=True
        )
    )
    count = memory_set_status(
        memories=Memory.objects.filter(pk__in=ids), status=Memory.Status.ACTIVE, user=user, reason=reason
    )
    MemoryLink.objects.filter(source_id__in=ids, kind=MemoryLink.Kind.COMPRESSED_INTO).delete()
    emptied = Memory.objects.filter(pk__in=summary_ids).exclude(
        links_in__kind=MemoryLink.Kind.COMPRESSED_INTO
    )
    archive = []
    for summary in emptied.select_for_update():
        if expired_folded(summary.meta, transitive=False):
            # It still holds originals that expired: their facts live on only in it. It is
            # rewritten from them (the restored ones speak for themselves again).
            summary_redo(summary=summary, leaving=set(ids), user=user, reason=reason, purge=False)
        else:
            archive.append(summary.pk)
    memory_set_status(
        memories=Memory.objects.filter(pk__in=archive),
        status=Memory.Status.ARCHIVED,
        user=user,
        reason=reason,
    )
    return count


def _expired(lifecycle: Lifecycle) -> Q:
    return Q(updated_at__lt=days_ago(lifecycle.compressed_keep_days))


def _expiring(tenant_id: int | None = None):
    return Memory.objects.filter(status=Memory.Status.COMPRESSED).filter(lifecycle_q(tenant_id, _expired))


def compressed_expiring(*, tenant_id: int | None = None) -> list[tuple[Memory, bool]]:
    """The originals `compressed_expire` takes on now, each with what it would do: True,
    delete it (a summary says it); False, put it back to active. Writes nothing."""
    terms: dict[str, SummaryTerms] = {}
    return [
        (memory, _held(memory, terms)) for memory in _expiring(tenant_id).defer("embedding").order_by("pk")
    ]


def compressed_expire(*, tenant_id: int | None = None) -> int:
    """Delete originals compressed more than COMPRESSED_KEEP_DAYS ago whose summary still
    says them (`summary_holds`); returns how many.

    One that no summary holds (no `compressed_into` link: its status set by hand; a summary
    rewritten since, or an LLM that left a fact out) goes back to active instead: deleting
    it would lose what it says.
    """
    terms: dict[str, SummaryTerms] = {}  # summary text → summary_terms, for this run
    done = 0
    expiring = _expiring(tenant_id)
    for memory_id, tenant_id in expiring.values_list("pk", "tenant_id"):
        with transaction.atomic():
            lock_tenant_writes(tenant_id)
            memory = expiring.select_for_update().filter(pk=memory_id).first()
            if memory is None:
                continue  # removed or restored meanwhile
            if not _held(memory, terms):
                _keep(memory)
                continue
            if not memory_row_delete(memory=memory, user=None, reason=EXPIRED_REASON):
                continue
            memory_audit(
                action="memory.delete",
                memory=memory,
                user=None,
                memory_id=memory_id,
                detail={"reason": "compressed-expired"},
                before=memory.content,
            )
        done += 1
    return done


def _held(memory: Memory, terms: dict[str, SummaryTerms]) -> bool:
    """Is `memory` linked to a summary that still says it? The summaries are read now, under
    the caller's locks (one edited since the run began counts as it reads now); `terms`
    caches the terms of each summary text."""
    summary_ids = MemoryLink.objects.filter(
        source_id=memory.pk, kind=MemoryLink.Kind.COMPRESSED_INTO
    ).values_list("target_id", flat=True)
    for content in Memory.objects.filter(pk__in=summary_ids).values_list("content", flat=True):
        if content not in terms:
            terms[content] = summary_terms(content)
        if summary_holds(memory.content, terms[content]):
            return True
    return False


def _keep(memory: Memory) -> None:
    """A compressed original no summary holds: back to active, unlinked (audited)."""
    memory_set_status(
        memories=Memory.objects.filter(pk=memory.pk),
        status=Memory.Status.ACTIVE,
        user=None,
        reason=KEPT_REASON,
    )
    MemoryLink.objects.filter(source_id=memory.pk, kind=MemoryLink.Kind.COMPRESSED_INTO).delete()
    memory_audit(
        action="memory.restore",
        memory=memory,
        user=None,
        memory_id=memory.pk,
        detail={"reason": "compressed-not-held"},
    )
