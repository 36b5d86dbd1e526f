"""django-q2 tasks of the documents app: they take ids, load, guard and delegate (docs/style.md, Tasks)."""

from __future__ import annotations

from documents.services.reading import document_read


def document_read_task(document_id: int) -> str | None:
    """Read an uploaded document's text; idempotent (only a pending document is read)."""
    return document_read(document_id=document_id)
