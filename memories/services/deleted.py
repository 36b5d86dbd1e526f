"""Deleted memories brought back from their history: the owner's undo of a delete
(MEMORY_UNDO_SECONDS) and a governor's restore (MEMORY_RESTORE_DAYS).

A delete keeps the memory's history (`memory_delete`); its last row, of type "-", holds
everything the memory was but its index columns (embedding, keyword fields), which are
computed again. A purged memory's history has lost its text: it cannot come back.
"""

from __future__ import annotations

from django.db import transaction
from django.http import Http404
from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.search import keyword
from almanac.search.embeddings import embed
from memories.models import CORPUS, Memory
from memories.permissions import restore_window
from memories.services.rows import PURGED, lock_tenant_writes, memory_audit
from memories.services.supersede import mark_superseded


def memory_deleted_get(*, user, memory_id: int):
    """The history row of `memory_id`'s delete, when the memory is deleted now and belonged
    to `user`'s tenant; Http404 otherwise (as for a memory the user may not see)."""
    tenant_id = getattr(getattr(user, "profile", None), "tenant_id", None)
    last = Memory.history.filter(id=memory_id).order_by("-history_id").first()
    if last is None or last.history_type != "-" or last.tenant_id != tenant_id:
        raise Http404("memory not found")
    if Memory.objects.filter(pk=memory_id).exists():  # a delete rolled back meanwhile
        raise Http404("memory not found")
    return last


@transaction.atomic
def memory_restore_deleted(*, user, memory_id: int, reason: str = "restore") -> Memory:
    """Bring a deleted memory back as it was when deleted (its id, scope, status, created
    date), re-embedded and re-indexed, with a history row and a `memory.restore` audit event.

    1. The tenant's write lock; the delete's history row (404 when there is none).
    2. Who may, and until when (`memories.permissions.restore_window`): 403 / 410.
    3. The row again; what it had superseded before the delete released them is superseded
       again when it still states another value of the same thing.
    """
    tenant_id = getattr(getattr(user, "profile", None), "tenant_id", None)
    if tenant_id is not None:
        lock_tenant_writes(tenant_id)
    deleted = memory_deleted_get(user=user, memory_id=memory_id)
    window = restore_window(user=user, memory=deleted.instance)
    if window is None:
        raise ApplicationError("only the owner or a governor may restore this memory", status_code=403)
    if deleted.content == PURGED:
        raise ApplicationError("this memory was deleted everywhere: it cannot be restored", status_code=410)
    if timezone.now() - deleted.history_date > window:
        raise ApplicationError("this memory was deleted too long ago to be restored", status_code=410)
    memory = _row_again(deleted, user=user, reason=reason)
    _supersede_again(memory, user=user, reason=reason)
    memory_audit(
        action="memory.restore",
        memory=memory,
        user=user,
        memory_id=memory.pk,
        detail={"reason": reason, "deleted_at": deleted.history_date.isoformat()},
        after=memory.content,
    )
    return memory


def _row_again(deleted, *, user, reason: str) -> Memory:
    """Insert the memory its delete's history row describes, index columns computed again."""
    memory = deleted.instance
    if memory.superseded_by_id and not Memory.objects.filter(pk=memory.superseded_by_id).exists():
        memory.superseded_by_id = None
    if memory.status == Memory.Status.COMPRESSED or (
        memory.status == Memory.Status.SUPERSEDED and memory.superseded_by_id is None
    ):
        # Its summary's links (or its successor) went with the delete: it speaks for itself.
        memory.status = Memory.Status.ACTIVE
    if (memory.meta or {}).get("source") == "compression":
        # Its originals came back when it was deleted and say it all again themselves.
        memory.status = Memory.Status.ARCHIVED
    index = keyword.index_fields(memory.content)
    for name, value in index.items():
        setattr(memory, name, value)
    memory.embedding = embed([memory.content])[0]
    memory._history_user = user
    memory._change_reason = reason
    memory.save(force_insert=True)
    keyword.stats_apply(tenant_id=memory.tenant_id, corpus=CORPUS, old=None, new=index)
    # `created_at` is set on insert (auto_now_add): its own date put back. No history row is
    # wanted for that: the insert's row already records the restore.
    Memory.objects.filter(pk=memory.pk).update(created_at=deleted.created_at)
    memory.created_at = deleted.created_at
    return memory


def _supersede_again(memory: Memory, *, user, reason: str) -> list[int]:
    """The memories `memory` had superseded (its delete set them active again) superseded
    again, when they are still active in its scope with its key."""
    if memory.status != Memory.Status.ACTIVE or not memory.fact_key:
        return []
    ever = Memory.history.filter(superseded_by_id=memory.pk).values_list("id", flat=True)
    again = Memory.objects.filter(
        pk__in=set(ever), status=Memory.Status.ACTIVE, acl=memory.acl, fact_key=memory.fact_key
    ).select_for_update(of=("self",))
    done = []
    for previous in again.defer("embedding"):
        mark_superseded(previous, by=memory, user=user, reason=reason)
        done.append(previous.pk)
    return done
