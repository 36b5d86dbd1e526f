"""Optional page summaries by the `summarize` skill, kept apart from the sections.

A summary records which sections it was made from (`summary_section_ids`) and their
digest; it is regenerated only when that set or its text changed, and shown only to a
reader who may see every one of those sections (see `selectors.page_summary_for_user`).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from skills.services import skill_run
from wiki.models import Page, PageSection, summary_digest

log = logging.getLogger(__name__)


def _summarize(*, tenant, title: str, text: str) -> str | None:
    output = skill_run(
        name="summarize",
        input={"text": text, "max_tokens": settings.WIKI_SUMMARY_MAX_TOKENS, "title": title},
        trigger="wiki.page",
        tenant=tenant,
    )
    return (output.get("summary") or "").strip() or None


def page_summarize(*, page_id: int) -> bool:
    """Regenerate the summary of a page if its current sections differ from the last one's."""
    page = Page.objects.filter(id=page_id).first()
    if page is None:
        return False
    sections = list(PageSection.objects.filter(page=page, stale=False).order_by("occurred_at", "id"))
    digest = summary_digest(sections)
    if digest == page.summary_digest:
        return False
    summary = ""
    if sections:
        text = "\n\n".join(s.content for s in sections)[:200_000]
        try:
            summary = _summarize(tenant=page.tenant, title=page.title, text=text) or ""
        except Exception:
            log.exception("summarizing page %s failed", page_id)
            return False
    with transaction.atomic():
        page = Page.objects.select_for_update().get(id=page_id)
        current = list(PageSection.objects.filter(page=page, stale=False))
        if summary_digest(current) != digest:
            return False  # sections changed while we summarized; the next task will redo it
        page.summary, page.summary_digest = summary, digest
        page.summary_section_ids = sorted(s.pk for s in sections)
        page._change_reason = "summary regenerated"
        page.save(update_fields=["summary", "summary_digest", "summary_section_ids", "updated_at"])
    return True
