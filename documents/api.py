"""Documents endpoints (docs/api.md, Documents). Thin: resolve the acting user, call a selector/service."""

from __future__ import annotations

from django.conf import settings
from ninja import File, Form, Router
from ninja.files import UploadedFile
from ninja.responses import Status

from almanac.auth import acting_user
from almanac.errors import ApplicationError
from documents.models import Document
from documents.schemas import DocumentOut
from documents.selectors import document_get_for_user, document_memory_ids
from documents.services.documents import document_delete, document_upload
from memories.schemas import Scope

router = Router(tags=["documents"])


def _out(*, user, document: Document) -> dict:
    fields = {f: getattr(document, f) for f in DocumentOut.model_fields if f != "memory_ids"}
    return fields | {"memory_ids": document_memory_ids(user=user, document=document)}


@router.post("", response={200: DocumentOut, 202: DocumentOut})
def upload_document(
    request,
    file: File[UploadedFile],
    user: Form[str | None] = None,
    scope: Form[Scope] = "user",
    scope_key: Form[str | None] = None,
):
    """Upload a PDF, Markdown or text file into a scope; 202 while its text is read, 200 with
    the existing document when the same file is in that scope already."""
    acting = acting_user(request, user)
    if file.size > settings.DOCUMENT_MAX_BYTES:  # refused before it is read into memory
        raise ApplicationError(
            f"the file is larger than {settings.DOCUMENT_MAX_BYTES} bytes (DOCUMENT_MAX_BYTES)",
            status_code=413,
        )
    document, created = document_upload(
        user=acting, data=file.read(), filename=file.name or "", scope=scope, scope_key=scope_key
    )
    return Status(202 if created else 200, _out(user=acting, document=document))


@router.get("/{document_id}", response=DocumentOut)
def get_document(request, document_id: int, user: str | None = None):
    acting = acting_user(request, user)
    return _out(user=acting, document=document_get_for_user(user=acting, document_id=document_id))


@router.delete("/{document_id}", response={204: None})
def delete_document(request, document_id: int, user: str | None = None):
    """Delete the document and the memories it produced (audited)."""
    acting = acting_user(request, user)
    document_delete(document=document_get_for_user(user=acting, document_id=document_id), user=acting)
    return Status(204, None)
