"""A user's rename or deletion reaches the documents of their personal scope (as their
memories: `memories.services.users`)."""

from __future__ import annotations

from django.db import transaction

from documents.models import Document
from documents.services.files import file_remove
from memories.models import Memory


def documents_remove(*, documents) -> int:
    """Delete these documents' rows (their memories go with their scope's own rules) and,
    after the commit, each file no other document holds."""
    rows = list(documents)
    for document in rows:
        document._change_reason = "user-deleted"
        document.delete()
    for document in rows:
        if not Document.objects.filter(tenant_id=document.tenant_id, sha256=document.sha256).exists():
            transaction.on_commit(lambda path=document.path: file_remove(relative=path))
    return len(rows)


@transaction.atomic
def documents_personal_key_change(*, tenant_id: int, old_key: str, new_key: str | None) -> int:
    """A renamed user's documents follow the new key; a retired key's documents are deleted."""
    documents = Document.objects.filter(tenant_id=tenant_id, acl=[old_key])
    if new_key is None:
        return documents_remove(documents=documents.defer("page_texts"))
    scope_key = new_key.removeprefix(Memory.acl_key(Memory.Scope.USER, ""))
    # No history row per document: the rename is the user's, recorded on the user; older
    # versions follow the key, so the next holder of the old name reads none of them.
    Document.history.filter(tenant_id=tenant_id, acl=[old_key]).update(acl=[new_key], scope_key=scope_key)
    return documents.update(acl=[new_key], scope_key=scope_key)


@transaction.atomic
def documents_owner_leave(*, user) -> int:
    """`user` is being deleted: the documents of their own scope go; what they shared stays,
    without an uploader."""
    return documents_remove(
        documents=Document.objects.filter(owner_id=user.pk, scope="user").defer("page_texts")
    )
