"""Purge (docs/design.md, Governance): a sensitive memory deleted with what still says it.

Its history rows keep who changed what and when but lose the text and meta, so do the
history rows of the summaries that ever folded it in; skill runs, audit texts, the admin's
log and django-q's task log that quote any text it ever had are scrubbed.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import transaction
from django.db.models import Q

from almanac.errors import ApplicationError
from almanac.search.text import is_cjk
from memories.models import Memory, MemoryAuditText
from memories.permissions import can_modify
from memories.services.memories import memory_remove
from memories.services.revocation import expired_folded
from memories.services.rows import PURGED, history_scrub, lock_tenant_writes, memory_audit
from skills.services import skillrun_redact


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
    counts = _traces_scrub(memory=memory, memory_id=memory_id, texts=texts, expired=expired, reason=reason)
    # 7. Caches hold copies nobody can list by content: emptied once the purge commits.
    transaction.on_commit(cache.clear)
    memory_audit(
        action="memory.purge",
        memory=memory,
        user=user,
        memory_id=memory_id,
        detail={"reason": reason, **counts},
    )
    return counts


def _traces_scrub(
    *, memory: Memory, memory_id: int, texts: set[str], expired: dict[int, str], reason: str
) -> dict:
    """Steps 3 to 6 of `memory_purge` for a memory just deleted (`texts`: every text it ever
    had; `expired`: the texts of originals that lived on only in it); returns how many of
    each were scrubbed."""
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
    return {
        "history_rows": history + scrubbed,
        "skill_runs": runs,
        "audit_texts": audited,
        "admin_log": logged,
        "task_log": tasks,
    }


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
