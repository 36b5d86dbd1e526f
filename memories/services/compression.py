"""Compression (docs/design.md, Memories): many active memories on one topic become one summary memory.

A topic is a group of active semantic memories of one scope (one acl key, so the summary
is visible to exactly the readers of its originals; a user's private scope is theirs
alone) about one thing: the memories naming one entity or key subject, else sharing one
content word (`memories.topics.topic_terms`), the most specific such name first; then
those whose embeddings are close to a topic join it, and the rest group by embedding
(each joins the first topic whose centroid it is at least MEMORY_TOPIC_SIMILARITY to).
A topic with more than MEMORY_COMPRESS_MIN members is cut into groups that fit one summary
of MEMORY_COMPRESS_MAX_TOKENS (`summary_groups`); each becomes one new memory when a
summary shorter than the group (in tokens) says every one of its facts (`summary_for`):
the LLM's (`compress` skill), checked for coverage, else the structured one
(`memories.topics.structured_summary`: a heading and one short line per distinct fact).
The originals the summary says (`summary_holds`) become `compressed`, are linked to it
(`compressed_into`) and can be restored for MEMORY_COMPRESSED_KEEP_DAYS, after which the
daily job deletes those its summary still holds and puts the others back to active.

A summary says what its originals said, to the readers of their scope. When an original
is deleted, purged, moved to another scope or rewritten, `summaries_release` makes its
summaries stop saying it in the same transaction (see there).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import CharField, Count, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from almanac.search.embeddings import embed
from almanac.search.tokens import count_tokens
from almanac.text.summaries import SummaryTerms, summary_holds, summary_terms
from memories.models import Memory, MemoryLink
from memories.services.common import log
from memories.services.rows import (
    PURGED,
    history_scrub,
    lock_tenant_writes,
    memory_audit,
    memory_content_apply,
    memory_insert,
    memory_row_delete,
    memory_set_status,
)
from memories.topics import covers, structured_summary, tokens_of, topic_terms
from skills.services import SkillFailed, skill_run

# The history reason of an original deleted after the keep period: its text then lives on
# only in its summary.
EXPIRED_REASON = "job:compressed-expired"
# The history reason of a compressed original put back to active because no summary holds it.
KEPT_REASON = "job:compressed-kept"


def _size(text: str) -> int:
    return count_tokens(text) + 2  # and the line break and full stop it is joined with


def summary_groups(memories: list[Memory]) -> list[list[Memory]]:
    """A topic cut, oldest first, into groups whose text fits one summary of at most
    COMPRESS_MAX_TOKENS, about equal in size; a memory longer than that alone, or a group of
    one, is left as it is (a summary of one memory is that memory again)."""
    cap = settings.MEMORY_COMPRESS_MAX_TOKENS
    sized = [(m, size) for m in memories if (size := _size(m.content)) <= cap]
    total = sum(size for _, size in sized)
    if not total:
        return []
    count = -(-total // cap)  # as few groups as fit
    target = -(-total // count)  # about equal in size
    groups: list[list[Memory]] = [[]]
    used = 0
    for memory, size in sized:
        if groups[-1] and (used >= target or used + size > cap):
            groups.append([])
            used = 0
        groups[-1].append(memory)
        used += size
    return [group for group in groups if len(group) > 1]


@dataclass
class Topic:
    """Memories of one scope about one thing; `term` names it ("" for one found by embedding)."""

    term: str
    memories: list[Memory] = field(default_factory=list)


def topics(memories: list[Memory]) -> list[Topic]:
    """The topics of one scope's memories (oldest first): by shared name or word
    (`_term_topics`), then by embedding for the rest (`_vector_topics`)."""
    named, rest = _term_topics(memories)
    rest = _join_close(named, rest)
    return named + [Topic(term="", memories=group) for group in _vector_topics(rest)]


def _term_topics(memories: list[Memory]) -> tuple[list[Topic], list[Memory]]:
    """Greedy: while a name (else a key subject or content word) is shared by more than
    COMPRESS_MIN of the memories left, its memories are a topic. Names come first, the most
    specific (fewest memories) first; then words, the most shared first."""
    terms = {m.pk: topic_terms(m.content, m.fact_key) for m in memories}
    found: list[Topic] = []
    left = list(memories)
    while True:
        counts: Counter = Counter()
        named: set[str] = set()
        for memory in left:
            subjects, words = terms[memory.pk]
            counts.update(subjects | words)
            named |= subjects
        ranked = [
            (0, n, -len(term), term) if term in named else (1, -n, -len(term), term)
            for term, n in counts.items()
            if n > settings.MEMORY_COMPRESS_MIN
        ]
        if not ranked:
            return found, left
        term = min(ranked)[3]
        members = [m for m in left if term in terms[m.pk][0] or term in terms[m.pk][1]]
        found.append(Topic(term=term, memories=members))
        left = [m for m in left if m not in members]


def _unit(memory: Memory) -> np.ndarray:
    vector = np.asarray(memory.embedding, dtype=np.float32)
    return vector / (np.linalg.norm(vector) or 1.0)


def _join_close(named: list[Topic], rest: list[Memory]) -> list[Memory]:
    """Memories close to a named topic (cosine to its centroid at least TOPIC_SIMILARITY)
    join it, the closest; returns the others."""
    if not named or not rest:
        return rest
    centroids = []
    for topic in named:
        total = np.sum([_unit(m) for m in topic.memories], axis=0)
        centroids.append(total / (np.linalg.norm(total) or 1.0))
    left = []
    for memory in rest:
        scores = [float(c @ _unit(memory)) for c in centroids]
        best = int(np.argmax(scores))
        if scores[best] >= settings.MEMORY_TOPIC_SIMILARITY:
            named[best].memories.append(memory)
        else:
            left.append(memory)
    for topic in named:
        topic.memories.sort(key=lambda m: (m.created_at, m.pk))
    return left


def _vector_topics(memories: list[Memory]) -> list[list[Memory]]:
    """Greedy single pass, oldest first: a memory joins the first topic whose (running)
    centroid it is at least TOPIC_SIMILARITY to, else starts a new one."""
    groups: list[list[Memory]] = []
    sums: list[np.ndarray] = []
    for memory in memories:
        vector = np.asarray(memory.embedding, dtype=np.float32)
        best = None
        for index, total in enumerate(sums):
            centroid = total / (np.linalg.norm(total) or 1.0)
            if float(centroid @ vector) >= settings.MEMORY_TOPIC_SIMILARITY:
                best = index
                break
        if best is None:
            groups.append([memory])
            sums.append(vector.copy())
        else:
            groups[best].append(memory)
            sums[best] += vector
    return groups


@dataclass(frozen=True)
class Summary:
    """A summary of some memories that says all of them in fewer tokens: its text, how it
    was made ("llm", "extractive": the `compress` skill with or without an LLM;
    "structured") and the tokens of the memories and of the summary."""

    text: str
    method: str
    tokens_before: int
    tokens_after: int


def summary_for(texts: list[str], *, tenant, reason: str, use_skill: bool = True) -> Summary | None:
    """The summary of `texts` to write, or None when none is shorter than they are.

    Only a summary that says every memory (`covers`: their numbers with what they are of,
    dates, ids, names, words and negation) in fewer tokens than they take counts: the
    `compress` skill's (`use_skill`) with an LLM, its abstractive summary when it passes;
    else the shorter of the skill's offline extractive one and the structured one (a
    heading and one line per distinct fact)."""
    before = tokens_of(texts)
    candidates = []
    if use_skill and before > 1:
        text = _skill_summary(texts, tenant=tenant, reason=reason, limit=before - 1)
        missing = covers(text, texts) if text else list(texts)
        if text and not missing and settings.LLM_BASE_URL and count_tokens(text) < before:
            return Summary(text=text, method="llm", tokens_before=before, tokens_after=count_tokens(text))
        if text and not missing:
            candidates.append((text, "extractive"))
        elif text and settings.LLM_BASE_URL:
            log.info("compress: the LLM summary leaves out %s of %s memories", len(missing), len(texts))
    candidates.append((structured_summary(texts), "structured"))
    best = min(candidates, key=lambda c: count_tokens(c[0]))  # min() keeps the first of equals
    after = count_tokens(best[0])
    if after >= before:
        return None
    return Summary(text=best[0], method=best[1], tokens_before=before, tokens_after=after)


def _skill_summary(texts: list[str], *, tenant, reason: str, limit: int) -> str:
    budget = max(1, min(settings.MEMORY_COMPRESS_MAX_TOKENS, limit))
    try:
        out = skill_run(
            name="compress",
            input={"items": texts, "max_tokens": budget},
            trigger=reason,
            tenant=tenant,
        )
    except SkillFailed:
        log.warning("compress skill failed: the structured summary instead")
        return ""
    return (out.get("summary") or "").strip()


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
    now = {
        pk: rest
        for pk, *rest in Memory.objects.select_for_update()
        .filter(pk__in=[m.pk for m in memories])
        .order_by("pk")
        .values_list("pk", "updated_at", "acl", "status")
    }
    # A rename re-keys rows without touching updated_at: the scope is compared as well.
    if any(now.get(m.pk) != [m.updated_at, m.acl, Memory.Status.ACTIVE] for m in memories):
        # Its run log (written in this transaction) holds the old texts: a purge that came
        # while the skill ran could not redact a row it could not see yet, so it goes.
        transaction.set_rollback(True)
        return None
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


def _crowded_scopes(*, tenant_id: int | None = None, acl_key: str | None = None):
    """(tenant id, acl key) of scopes with more active semantic memories than COMPRESS_MIN."""
    rows = Memory.objects.filter(status=Memory.Status.ACTIVE, memory_type=Memory.Type.SEMANTIC)
    if tenant_id is not None:
        rows = rows.filter(tenant_id=tenant_id)
    if acl_key is not None:
        rows = rows.filter(acl=[acl_key])
    return (
        rows.annotate(key=RawSQL('"memories_memory"."acl"[1]', [], output_field=CharField()))
        .values("tenant_id", "key")
        .annotate(n=Count("id"))
        .filter(n__gt=settings.MEMORY_COMPRESS_MIN)
        .values_list("tenant_id", "key")
    )


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
    for tenant, key in list(_crowded_scopes(tenant_id=tenant_id, acl_key=acl_key)):
        rows = list(
            Memory.objects.filter(
                tenant_id=tenant,
                status=Memory.Status.ACTIVE,
                memory_type=Memory.Type.SEMANTIC,
                acl=[key],
            ).order_by("created_at", "id")
        )
        for topic in topics(rows):
            if len(topic.memories) <= settings.MEMORY_COMPRESS_MIN:
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


def memories_compress() -> int:
    """Compress every topic with more than COMPRESS_MIN members; returns how many summaries."""
    return sum(1 for planned in memories_compress_run() if planned.summary is not None)


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
            _summary_redo(summary=summary, leaving=set(ids), user=user, reason=reason, purge=False)
        else:
            archive.append(summary.pk)
    memory_set_status(
        memories=Memory.objects.filter(pk__in=archive),
        status=Memory.Status.ARCHIVED,
        user=user,
        reason=reason,
    )
    return count


def _expiring(tenant_id: int | None = None):
    cutoff = timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS)
    rows = Memory.objects.filter(status=Memory.Status.COMPRESSED, updated_at__lt=cutoff)
    return rows if tenant_id is None else rows.filter(tenant_id=tenant_id)


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


# --- Summaries that must stop saying what an original said ---------------------------


def summaries_folding(*, items: dict[int, tuple[int, str]]) -> dict[int, set[int]]:
    """{summary id: the ids of `items` it folded in}; `items` = {memory id: (tenant id, the
    acl key the memory had while it was folded)}.

    A summary lists its originals in `meta.compressed_from`, and the compressed ones are
    linked to it. Restored originals are no longer linked, but the summary still says what
    they say; it lives in their scope, so that scope's summaries are looked at too.
    """
    found: dict[int, set[int]] = defaultdict(set)
    if not items:
        return found
    links = MemoryLink.objects.filter(source_id__in=list(items), kind=MemoryLink.Kind.COMPRESSED_INTO)
    for source_id, target_id in links.values_list("source_id", "target_id"):
        found[target_id].add(source_id)
    scopes: dict[int, set[str]] = defaultdict(set)
    for tenant_id, key in items.values():
        scopes[tenant_id].add(key)
    # Only the summaries listing one of them (jsonb containment), unless there are many.
    naming = Q()
    if len(items) <= 100:
        for pk in items:
            naming |= Q(meta__compressed_from__contains=[pk])
    for tenant_id, keys in scopes.items():
        summaries = (
            Memory.objects.filter(tenant_id=tenant_id, acl__overlap=sorted(keys), meta__source="compression")
            .filter(naming)
            .values_list("pk", "meta__compressed_from")
        )
        for pk, folded in summaries:
            hit = items.keys() & set(folded if isinstance(folded, list) else [])
            if hit:
                found[pk] |= hit
    return found


@transaction.atomic
def summaries_release(
    *,
    items: dict[int, tuple[int, str]],
    user,
    reason: str,
    purge: bool = False,
    keep: frozenset = frozenset(),
) -> int:
    """Make the summaries of `items` (originals just deleted, purged, moved to another scope
    or rewritten; see `summaries_folding`) stop saying what those said, now: the very next
    read must not find it. For each summary:

    1. its originals that still exist hold their own text: the compressed ones go back to
       active, unlinked (nothing is lost, and the daily job may compress them again);
    2. originals deleted after the keep period live on only in the summary: it is rewritten
       from their last text (kept in their history) without the others; with none, it is
       deleted. `purge`: its history loses the old text too;
    3. a summary rewritten or deleted leaves the summaries that folded it in, in turn.

    `keep`: summaries only unlinked, neither rewritten nor deleted (their owner is being
    deleted and the cascade takes them). Returns how many summaries were rewritten or deleted.
    """
    pending = summaries_folding(items=items)
    done = 0
    while pending:
        summary_id, leaving = pending.popitem()
        summary = Memory.objects.select_for_update().filter(pk=summary_id).first()
        if summary is None:
            continue
        originals_release(summary=summary, user=user, reason=reason)
        if summary.pk in keep:
            continue
        parents = summaries_folding(items={summary.pk: (summary.tenant_id, summary.acl[0])})
        _summary_redo(summary=summary, leaving=leaving, user=user, reason=reason, purge=purge)
        done += 1
        for pk, ids in parents.items():
            pending.setdefault(pk, set()).update(ids)
    return done


def originals_release(*, summary: Memory, user, reason: str) -> int:
    """The compressed originals of `summary` back to active, no longer linked to it."""
    ids = list(
        MemoryLink.objects.filter(target=summary, kind=MemoryLink.Kind.COMPRESSED_INTO).values_list(
            "source_id", flat=True
        )
    )
    if not ids:
        return 0
    count = memory_set_status(
        memories=Memory.objects.filter(pk__in=ids, status=Memory.Status.COMPRESSED),
        status=Memory.Status.ACTIVE,
        user=user,
        reason=reason,
    )
    MemoryLink.objects.filter(target=summary, kind=MemoryLink.Kind.COMPRESSED_INTO).delete()
    return count


def originals_release_unsaid(*, summary: Memory, user, reason: str) -> int:
    """After a summary was rewritten: its compressed originals it no longer says (`summary_holds`)
    back to active and unlinked, at once (they were hidden until the expiry job ran)."""
    terms = summary_terms(summary.content)
    links = MemoryLink.objects.filter(target=summary, kind=MemoryLink.Kind.COMPRESSED_INTO)
    unsaid = [
        pk
        for pk, content in Memory.objects.filter(
            pk__in=links.values("source_id"), status=Memory.Status.COMPRESSED
        ).values_list("pk", "content")
        if not summary_holds(content, terms)
    ]
    if not unsaid:
        return 0
    count = memory_set_status(
        memories=Memory.objects.filter(pk__in=unsaid), status=Memory.Status.ACTIVE, user=user, reason=reason
    )
    links.filter(source_id__in=unsaid).delete()
    return count


def _summary_redo(*, summary: Memory, leaving: set[int], user, reason: str, purge: bool) -> None:
    """Rewrite `summary` from its originals already deleted after the keep period, or delete it."""
    folded = [pk for pk in summary.meta.get("compressed_from") or [] if pk not in leaving]
    existing = set(Memory.objects.filter(pk__in=folded).values_list("pk", flat=True))
    texts = _expired_texts([pk for pk in folded if pk not in existing])
    memory_id = summary.pk
    if not texts:
        memory_row_delete(memory=summary, user=user, reason=reason)
        if purge:
            history_scrub(memory_id=memory_id, reason=reason)
        memory_audit(
            action="memory.delete",
            memory=summary,
            user=user,
            memory_id=memory_id,
            detail={"reason": reason, "summary_retired": True},
            before=summary.content,
        )
        return
    if purge:
        history_scrub(memory_id=memory_id, reason=reason)
    said = summary.content
    fields = memory_content_apply(
        summary, _compress_texts(list(texts.values()), summary=summary, reason=reason)
    )
    summary.meta = {**summary.meta, "compressed_from": list(texts)}
    summary._history_user = user
    summary._change_reason = reason
    summary.save(update_fields=[*fields, "meta", "updated_at"])
    memory_audit(
        action="memory.compress",
        memory=summary,
        user=user,
        memory_id=memory_id,
        detail={"reason": reason, "originals": len(texts), "rewritten": True},
        before=said,
        after=summary.content,
    )


def _expired_texts(ids: list[int]) -> dict[int, str]:
    """{id: last text} of the originals among `ids` deleted after the keep period (in order).

    Their history keeps what they said; an original deleted or purged by a person is left out.
    """
    if not ids:
        return {}
    last = (
        Memory.history.filter(id__in=ids)
        .order_by("id", "-history_date", "-history_id")
        .distinct("id")
        .values_list("id", "history_type", "history_change_reason", "content")
    )
    found = {
        pk: content
        for pk, kind, why, content in last
        if kind == "-" and why == EXPIRED_REASON and content.strip() and content != PURGED
    }
    return {pk: found[pk] for pk in ids if pk in found}


def expired_folded(meta: dict | None, *, transitive: bool = True) -> dict[int, str]:
    """{id: last text} of the originals a summary (by its `meta`) folded in that expired
    since: their text lives on only in the summary and in their own history. `transitive`:
    through the summaries it folded in that expired too."""
    found: dict[int, str] = {}
    meta = meta or {}
    frontier = list(meta.get("compressed_from") or []) if meta.get("source") == "compression" else []
    while frontier:
        frontier = [pk for pk in dict.fromkeys(frontier) if pk not in found]
        existing = set(Memory.objects.filter(pk__in=frontier).values_list("pk", flat=True))
        texts = _expired_texts([pk for pk in frontier if pk not in existing])
        found.update(texts)
        if not transitive or not texts:
            break
        metas = (
            Memory.history.filter(id__in=list(texts))
            .exclude(history_type="-")
            .order_by("id", "-history_date", "-history_id")
            .distinct("id")
            .values_list("meta", flat=True)
        )
        frontier = [
            pk
            for m in metas
            if (m or {}).get("source") == "compression"
            for pk in (m.get("compressed_from") or [])
        ]
    return found


def _compress_texts(texts: list[str], *, summary: Memory, reason: str) -> str:
    """A summary of `texts` (originals that are gone, whose facts live on only here): the
    skill's when it says every one of them in fewer tokens, else their own text, whole, as
    they said it (losing any of it is the one thing not to do)."""
    before = tokens_of(texts)
    text = _skill_summary(texts, tenant=summary.tenant, reason=reason, limit=before - 1) if before > 1 else ""
    if text and not covers(text, texts) and count_tokens(text) < before:
        return text
    return "\n".join(texts)[: settings.MEMORY_MAX_CONTENT_CHARS]
