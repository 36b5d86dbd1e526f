"""Reading a document's text, off the request (docs/api.md, Documents).

1. claim the pending document (a retried task finds it claimed and does nothing);
2. read the text of its pages from its file, outside any transaction;
3. in one short transaction: store the pages and counts (or the reason it failed) and send
   `document.uploaded`, which the skills get after the commit.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from documents.models import Document
from documents.services.files import Unreadable, file_read, page_texts
from skills.events import actor_fields, scope_fields
from skills.signals import domain_event

logger = logging.getLogger(__name__)


def document_read(*, document_id: int) -> str | None:
    """Read a pending document's text; returns its new status (None: not pending, nothing done)."""
    document = Document.objects.filter(pk=document_id, status=Document.Status.PENDING).first()
    if document is None:
        return None
    try:
        pages = page_texts(data=file_read(relative=document.path), format=document.format)
    except (Unreadable, OSError) as exc:
        reason = str(exc) if isinstance(exc, Unreadable) else "the stored file cannot be read"
        logger.info("document %s not read: %s", document_id, reason)
        done = Document.objects.filter(pk=document_id, status=Document.Status.PENDING).update(
            status=Document.Status.FAILED, reason=reason[:2000]
        )  # no history row: the failure is its state, said in `reason`
        return Document.Status.FAILED if done else None
    return _store_pages(document=document, pages=pages)


@transaction.atomic
def _store_pages(*, document: Document, pages: list[str]) -> str | None:
    pages = [text.replace("\x00", "") for text in pages]
    characters = sum(len(text) for text in pages)
    claimed = Document.objects.filter(pk=document.pk, status=Document.Status.PENDING).update(
        status=Document.Status.READ, pages=len(pages), characters=characters, page_texts=pages, reason=""
    )  # no history row for the text: `page_texts` is not audited (its history excludes it)
    if not claimed:
        return None
    document.refresh_from_db()
    document_uploaded_announce(document=document)
    return Document.Status.READ


def document_uploaded_announce(*, document: Document) -> None:
    """`document.uploaded` for the skills (after the commit; nothing on a rollback): who
    uploaded it into which scope, and its text up to DOCUMENT_EVENT_TEXT_CHARS (a skill reads
    the rest, page by page, from the document as the uploader may: `documents.selectors`)."""
    text = "\n\n".join(document.page_texts)
    limit = settings.DOCUMENT_EVENT_TEXT_CHARS
    payload = {
        "event_id": f"document:{document.pk}:{document.sha256}",
        "document_id": document.pk,
        "filename": document.filename,
        "format": document.format,
        "sha256": document.sha256,
        **actor_fields(document.owner),
        **scope_fields(document.scope, document.scope_key),
        "pages": document.pages,
        "characters": document.characters,
        "text": text[:limit],
        "text_truncated": len(text) > limit,
    }
    domain_event.send(
        sender=Document, event="document.uploaded", payload=payload, tenant_id=document.tenant_id
    )
