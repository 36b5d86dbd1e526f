"""Permission rules of the memories app: who may change a memory, who may speak for the company."""

from __future__ import annotations

# A governor of memories: may change or delete anyone's, and write for the whole company.
COMPANY_PERMISSION = "memories.change_memory"


def can_modify(*, user, memory, perm: str) -> bool:
    """The memory's owner, or a holder of `memories.<perm>` globally or on this memory."""
    return (
        memory.owner_id == user.pk
        or user.has_perm(f"memories.{perm}")
        or user.has_perm(f"memories.{perm}", memory)
    )


def may_speak_for_company(user) -> bool:
    """A tenant admin (staff) or a governor of memories: a company-wide statement they make
    is written to the tenant's scope."""
    return bool(user.is_staff or user.has_perm(COMPANY_PERMISSION))
