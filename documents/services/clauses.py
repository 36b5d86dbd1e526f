"""What `contract_clauses` found in a document becomes memories (`kind: clause`) of the
document's scope, owned by its uploader, each naming the document and page it came from."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from almanac.errors import ApplicationError
from almanac.search.embeddings import embed
from documents.models import Document
from memories.models import Memory
from memories.services.memories import memory_create
from skills.builtin.contract_clauses import MAX_PAGE_CHARS

logger = logging.getLogger(__name__)

CLAUSE_IMPORTANCE = 0.8  # contract terms: dates and amounts someone will act on
SKILL = "contract_clauses"


def contract_input(payload: dict) -> dict | None:
    """The skill's input for a `document.uploaded` payload: the pages of a document just read,
    as its uploader may read it (None for another sender's document event, or a document
    gone or already done)."""
    if not isinstance(payload.get("document_id"), int):
        return None
    document = Document.objects.filter(pk=payload["document_id"], status=Document.Status.READ).first()
    if document is None or document.owner is None:
        return None
    if not Document.objects.visible_to(document.owner).filter(pk=document.pk).exists():
        return None
    # A page longer than the skill reads is cut: a contract's clauses are in its first pages' worth.
    pages = [
        {"page": number, "text": text[:MAX_PAGE_CHARS]}
        for number, text in enumerate(document.page_texts, start=1)
        if text.strip()
    ]
    return {"pages": pages, "title": document.filename, "lang": None} if pages else None


def _meta(document: Document, clause: dict, method: str) -> dict:
    meta = {
        "source": "document",
        "document_id": document.pk,
        "filename": document.filename,
        "page": clause.get("page"),
        "clause": clause["type"],
        "skill": SKILL,
        "method": method,
    }
    meta.update({k: clause[k] for k in ("date", "amount", "duration", "value") if clause.get(k)})
    return meta


def _clauses(output: dict) -> list[dict]:
    return [c for c in output.get("clauses") or [] if isinstance(c, dict) and (c.get("text") or "").strip()]


def document_clauses_keep(*, document_id: int, output: dict) -> list[int]:
    """Keep each clause as a memory; the document is then done. Idempotent: only a document
    in status `read` is written to (under its row lock), so a redelivery adds nothing.
    The texts are embedded first, outside the transaction. Returns the memory ids."""
    document = Document.objects.filter(pk=document_id, status=Document.Status.READ).first()
    if document is None:
        return []
    clauses = _clauses(output)
    # The method that made it: the skill's output says (an LLM's output is marked by the LLM path).
    method = "llm" if output.get("method") == "llm" else "rules"
    texts = [c["text"].strip()[: settings.MEMORY_MAX_CONTENT_CHARS] for c in clauses]
    vectors = embed(texts) if texts else []
    try:
        return _write(document_id=document_id, clauses=clauses, texts=texts, vectors=vectors, method=method)
    except ApplicationError as exc:  # the uploader may no longer write to the scope, or has left
        reason = f"the clauses could not be kept: {exc.message}"
        Document.objects.filter(pk=document_id, status=Document.Status.READ).update(
            status=Document.Status.FAILED, reason=reason[:2000]
        )
        return []


@transaction.atomic
def _write(*, document_id: int, clauses: list[dict], texts: list[str], vectors, method: str) -> list[int]:
    document = (
        Document.objects.select_for_update(of=("self",))
        .select_related("owner")
        .filter(pk=document_id, status=Document.Status.READ)
        .first()
    )
    if document is None:
        return []
    if document.owner is None:
        raise ApplicationError("its uploader was deleted")
    ids = []
    for clause, text, vector in zip(clauses, texts, vectors, strict=True):
        memory, _ = memory_create(
            owner=document.owner,
            content=text,
            memory_type=Memory.Type.SEMANTIC,
            scope=document.scope,
            scope_key=document.scope_key,
            importance=CLAUSE_IMPORTANCE,
            meta=_meta(document, clause, method),
            reason="document",
            embedding=vector,
            kind=Memory.Kind.CLAUSE,
            # One value per clause of this document: a clause of another contract is never
            # "another value" of it.
            key=f"document {document.pk} {clause['type']}",
        )
        ids.append(memory.pk)
    document.status = Document.Status.DONE
    document._change_reason = f"{SKILL}: {len(ids)} clause(s) kept"
    document.save(update_fields=["status", "updated_at"])
    return ids
