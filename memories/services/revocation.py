"""Revocation: summaries that must stop saying what an original said.

A summary says what its originals said, to the readers of their scope. When an original
is deleted, purged, moved to another scope or rewritten, `summaries_release` makes its
summaries stop saying it in the same transaction: originals that still exist hold their own
text again, a summary is rewritten from the originals that live on only in it (expired after
the keep period, `expired_folded`) or deleted.
"""

from __future__ import annotations

from collections import defaultdict

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from almanac.search.tokens import count_tokens
from almanac.text.summaries import summary_holds, summary_terms
from memories.models import Memory, MemoryLink
from memories.services.rows import (
    PURGED,
    history_scrub,
    memory_audit,
    memory_content_apply,
    memory_row_delete,
    memory_set_status,
)
from memories.services.topics import skill_summary
from memories.topics import covers, tokens_of

# The history reason of an original deleted after the keep period: its text then lives on
# only in its summary.
EXPIRED_REASON = "job:compressed-expired"


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
        summary_redo(summary=summary, leaving=leaving, user=user, reason=reason, purge=purge)
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


def summary_redo(*, summary: Memory, leaving: set[int], user, reason: str, purge: bool) -> None:
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
    text = (
        skill_summary(texts, tenant=summary.tenant, reason=reason, limit=before - 1)[0] if before > 1 else ""
    )
    if text and not covers(text, texts) and count_tokens(text) < before:
        return text
    return "\n".join(texts)[: settings.MEMORY_MAX_CONTENT_CHARS]
