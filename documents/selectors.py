"""Reads of documents, through the one access filter (`Document.objects.visible_to`)."""

from __future__ import annotations

from django.http import Http404

from documents.models import Document
from memories.models import Memory


def document_get_for_user(*, user, document_id: int) -> Document:
    """The document, if `user` may read its scope; Http404 for a missing one and for one they may not see."""
    document = Document.objects.visible_to(user).filter(pk=document_id).select_related("owner").first()
    if document is None:
        raise Http404("document not found")
    return document


def document_list(*, user):
    return Document.objects.visible_to(user).select_related("owner").defer("page_texts")


def document_memory_ids(*, user, document: Document) -> list[int]:
    """The ids of the memories the document produced that `user` may see (any status)."""
    qs = Memory.objects.visible_to(user, statuses=None).filter(meta__document_id=document.pk)
    return list(qs.order_by("id").values_list("id", flat=True))
