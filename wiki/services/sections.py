"""Writes of page sections: upsert with keyword statistics and embeddings, delete, confirm."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction

from almanac import keyword, search
from almanac.errors import ApplicationError
from wiki.models import Page, PageSection

CORPUS = "wiki"


@dataclass
class SectionDraft:
    """What a section should be after a rebuild (the compiler's deterministic output)."""

    thread_key: str
    container_key: str
    container_name: str
    title: str
    content: str
    occurred_at: datetime
    acl: list[str]
    authors: list[str]
    event_ids: list[int]
    source_list: list[dict]
    recall_event_ids: list[int] = field(default_factory=list)
    stale_reason: str = ""

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.title}\n{self.content}".encode()).hexdigest()


def _keyword_text(page: Page, draft: SectionDraft) -> str:
    return f"{page.title}\n{draft.title}\n{draft.content}"


def _old_index(section: PageSection) -> dict:
    return {"tokens": section.tokens, "tf": section.tf, "doc_len": section.doc_len}


def section_write(*, page: Page, draft: SectionDraft, reason: str) -> tuple[PageSection, bool]:
    """Create or update the section of (page, thread, container) to match `draft`.

    Returns (section, changed). The embedding and keyword index are recomputed only when
    the text changed, so replaying an event costs no embedding call and writes nothing.
    """
    section = PageSection.objects.filter(
        page=page, thread_key=draft.thread_key, container_key=draft.container_key
    ).first()
    confirmed = section.confirmed_recall_ids if section else []
    stale = bool(set(draft.recall_event_ids) - set(confirmed))
    values = {
        "container_name": draft.container_name[:300],
        "title": draft.title[:500],
        "content": draft.content,
        "content_digest": draft.digest,
        "occurred_at": draft.occurred_at,
        "acl": draft.acl,
        "authors": draft.authors,
        "event_ids": draft.event_ids,
        "source_list": draft.source_list,
        "recall_event_ids": draft.recall_event_ids,
        "stale": stale,
        "stale_reason": draft.stale_reason if stale else "",
    }
    if section is not None and all(getattr(section, k) == v for k, v in values.items()):
        return section, False
    text_changed = section is None or section.content_digest != draft.digest
    if section is None:
        section = PageSection(
            tenant_id=page.tenant_id,
            page=page,
            thread_key=draft.thread_key,
            container_key=draft.container_key,
        )
    old = _old_index(section) if section.pk and text_changed else None
    for name, value in values.items():
        setattr(section, name, value)
    if text_changed:
        new = keyword.index_fields(_keyword_text(page, draft))
        section.tokens, section.tf, section.doc_len = new["tokens"], new["tf"], new["doc_len"]
        section.embedding = search.embed([f"{draft.title}\n{draft.content}"[:4000]])[0]
        keyword.stats_apply(tenant_id=page.tenant_id, corpus=CORPUS, old=old, new=new)
    section._change_reason = reason
    section.save()
    return section, True


def section_delete(*, section: PageSection, reason: str) -> None:
    keyword.stats_apply(tenant_id=section.tenant_id, corpus=CORPUS, old=_old_index(section), new=None)
    section._change_reason = reason
    section.delete()


@transaction.atomic
def section_confirm(*, user, page: Page, section_ids: list[int]) -> list[PageSection]:
    """Make stale sections current again; only sections on `page` the user may see.

    The recalls the user confirmed are remembered, so a later rebuild of the thread does
    not make the section stale again for the same recall.
    """
    from django.http import Http404

    ids = sorted(set(section_ids))
    if not ids:
        raise ApplicationError("section_ids may not be empty", status_code=422)
    sections = list(
        PageSection.objects.visible_to(user, include_stale=True)
        .filter(page=page, id__in=ids)
        .select_for_update(of=("self",))
        .order_by("id")
    )
    if len(sections) != len(ids):
        raise Http404("section not found")
    for section in sections:
        if not section.stale:
            continue
        section.confirmed_recall_ids = sorted(
            set(section.confirmed_recall_ids) | set(section.recall_event_ids)
        )
        section.stale = False
        section.stale_reason = ""
        section._change_reason = f"confirmed by {user.username}"
        section._history_user = user
        section.save(update_fields=["confirmed_recall_ids", "stale", "stale_reason", "updated_at"])
    return sections
