"""Permission rules of the documents app: who may delete a document, who may upload in the admin."""

from __future__ import annotations

from almanac.permissions import sees_everything


def can_delete(*, user, document) -> bool:
    """The uploader, or a holder of `documents.delete_document` globally or on this document
    (as a memory: `memories.permissions.can_modify`)."""
    return (
        document.owner_id == user.pk
        or user.has_perm("documents.delete_document")
        or user.has_perm("documents.delete_document", document)
    )


def admin_sees_every_document(user) -> bool:
    """A superuser's admin lists every tenant's documents; others the ones they may read."""
    return sees_everything(user)
