"""Upload and delete documents (docs/api.md, Documents)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django_q.tasks import async_task

from almanac.errors import ApplicationError
from almanac.services.audit import audit_record
from almanac.services.users import user_name
from documents.models import Document
from documents.permissions import can_delete
from documents.services.files import digest, document_format, document_path, file_remove, file_store
from memories.models import Memory
from memories.services.memories import memory_remove
from memories.services.scopes import scope_resolve

MAX_FILENAME = 255


@dataclass(frozen=True)
class DocumentDraft:
    """An upload as `document_upload_check` checked it."""

    tenant_id: int
    filename: str
    format: str
    sha256: str
    size: int
    scope: str
    scope_key: str


def _clean_filename(name: str) -> str:
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable()).strip()
    return name[:MAX_FILENAME] or "document"


def document_upload_check(
    *, user, data: bytes, filename: str, scope: str, scope_key: str | None
) -> DocumentDraft:
    """The upload checked, in this order: not empty (422), not too large (413), a PDF,
    Markdown or text file by its bytes (415), a scope `user` may write (as a memory's)."""
    if not data:
        raise ApplicationError("the file is empty", status_code=422)
    if len(data) > settings.DOCUMENT_MAX_BYTES:
        raise ApplicationError(
            f"the file is larger than {settings.DOCUMENT_MAX_BYTES} bytes (DOCUMENT_MAX_BYTES)",
            extra={"size": len(data), "limit": settings.DOCUMENT_MAX_BYTES},
            status_code=413,
        )
    filename = _clean_filename(filename)
    format = document_format(data=data, filename=filename)
    scope, scope_key = scope_resolve(user=user, scope=scope, scope_key=scope_key)
    return DocumentDraft(user.profile.tenant_id, filename, format, digest(data), len(data), scope, scope_key)


def _same(draft: DocumentDraft) -> Document | None:
    return Document.objects.filter(
        tenant_id=draft.tenant_id, scope=draft.scope, scope_key=draft.scope_key, sha256=draft.sha256
    ).first()


def document_upload_do(*, user, draft: DocumentDraft, data: bytes, actor=None) -> tuple[Document, bool]:
    """Store a checked upload and enqueue its reading after the commit; the same file in the
    same scope is the document already there. Returns `(document, created)`."""
    existing = _same(draft)
    if existing is not None:
        return existing, False
    path = document_path(tenant_id=draft.tenant_id, sha256=draft.sha256)
    file_store(relative=path, data=data)
    try:
        with transaction.atomic():
            document = Document.objects.create(
                tenant_id=draft.tenant_id, owner=user, scope=draft.scope, scope_key=draft.scope_key,
                acl=[Memory.acl_key(draft.scope, draft.scope_key)], filename=draft.filename,
                format=draft.format, sha256=draft.sha256, size=draft.size, path=path,
            )  # fmt: skip
    except IntegrityError:  # the same file, uploaded at the same moment by another request
        return _same(draft), False
    audit_record(
        action="document.upload",
        tenant_id=draft.tenant_id,
        actor=user_name(actor or user),
        object_type="document",
        object_id=document.pk,
        detail={"scope": f"{draft.scope}:{draft.scope_key}", "size": draft.size, "format": draft.format},
    )
    transaction.on_commit(lambda: async_task("documents.tasks.document_read_task", document.pk))
    return document, True


@transaction.atomic
def document_upload(
    *, user, data: bytes, filename: str, scope: str = "user", scope_key: str | None = None, actor=None
) -> tuple[Document, bool]:
    """Upload a file into a scope: `document_upload_check`, then `document_upload_do`.
    `actor`: who uploads it when that is not `user` (an admin uploading for them)."""
    draft = document_upload_check(user=user, data=data, filename=filename, scope=scope, scope_key=scope_key)
    return document_upload_do(user=user, draft=draft, data=data, actor=actor)


def document_memories(*, document: Document):
    """The memories a document produced (any status), whoever may see them."""
    return Memory.objects.filter(tenant_id=document.tenant_id, meta__document_id=document.pk)


@transaction.atomic
def document_delete(*, document: Document, user, reason: str = "api") -> int:
    """Delete a document, the memories it produced and (after the commit, when no other
    document holds the same bytes) its file; audited. Returns how many memories went."""
    if not can_delete(user=user, document=document):
        raise ApplicationError("only the uploader or a governor may delete this document", status_code=403)
    document = Document.objects.select_for_update().filter(pk=document.pk).first()
    if document is None:
        return 0
    removed = sum(memory_remove(memory=m, user=user, reason=f"document deleted: {reason}")
                  for m in document_memories(document=document))  # fmt: skip
    audit_record(
        action="document.delete",
        tenant_id=document.tenant_id,
        actor=user_name(user),
        object_type="document",
        object_id=document.pk,
        detail={"reason": reason, "memories": removed, "filename": document.filename},
    )
    document._change_reason = reason
    document.delete()
    if not Document.objects.filter(tenant_id=document.tenant_id, sha256=document.sha256).exists():
        transaction.on_commit(lambda: file_remove(relative=document.path))
    return removed
