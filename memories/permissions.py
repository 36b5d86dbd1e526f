"""Permission rules of the memories app: who may change a memory, who may bring a deleted one
back, who may speak for the company."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

# A governor of memories: may change or delete anyone's, and write for the whole company.
COMPANY_PERMISSION = "memories.change_memory"


def can_modify(*, user, memory, perm: str) -> bool:
    """The memory's owner, or a holder of `memories.<perm>` globally or on this memory."""
    return (
        memory.owner_id == user.pk
        or user.has_perm(f"memories.{perm}")
        or user.has_perm(f"memories.{perm}", memory)
    )


def modifiable_ids(*, user, memories, perm: str) -> set[int]:
    """The ids of `memories` that `user` may `perm`, as `can_modify` decides for each, with
    the object permissions of all of them read at once (a page of cards, not a query per card)."""
    from guardian.core import ObjectPermissionChecker

    if user.has_perm(f"memories.{perm}"):
        return {memory.pk for memory in memories}
    others = [memory for memory in memories if memory.owner_id != user.pk]
    checker = ObjectPermissionChecker(user)
    if others:
        checker.prefetch_perms(others)
    return {memory.pk for memory in memories if memory.owner_id == user.pk or checker.has_perm(perm, memory)}


def may_speak_for_company(user) -> bool:
    """A tenant admin (staff) or a governor of memories: a company-wide statement they make
    is written to the tenant's scope."""
    return bool(user.is_staff or user.has_perm(COMPANY_PERMISSION))


def restore_window(*, user, memory) -> timedelta | None:
    """How long after its delete `user` may bring `memory` back (memories.services.deleted):
    a governor of memories (`memories.delete_memory` globally or on it) MEMORY_RESTORE_DAYS,
    its owner MEMORY_UNDO_SECONDS (the undo of their own delete); anyone else not at all."""
    if user.has_perm("memories.delete_memory") or user.has_perm("memories.delete_memory", memory):
        return timedelta(days=settings.MEMORY_RESTORE_DAYS)
    if memory.owner_id is not None and memory.owner_id == user.pk:
        return timedelta(seconds=settings.MEMORY_UNDO_SECONDS)
    return None
