"""The wiki API (docs/api.md, Wiki): list, get-as-user, hybrid search, confirm stale sections."""

from __future__ import annotations

from typing import Literal

from ninja import Query, Router, Schema
from pydantic import ConfigDict, Field

from almanac.auth import acting_user
from wiki import permissions, search, selectors, series, status
from wiki.schemas import ConfirmIn, ConfirmOut, PageDetailOut, PageOut, WikiSearchIn, WikiSearchOut
from wiki.services.sections import section_confirm
from wiki.services.summary import page_summary_for_reader

router = Router(tags=["wiki"])


class PageListQuery(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str | None = Field(None, max_length=300)
    q: str = Field("", max_length=300, pattern=r"^[^\x00]*$")
    kind: Literal["customer", "project", "person", "topic", ""] = ""


def section_out(section) -> dict:
    return {
        "id": section.pk,
        "page": section.page.slug,
        "title": section.title,
        "container": section.container_name,
        "content": section.content,
        "occurred_at": section.occurred_at,
        "updated_at": section.updated_at,
        "stale": section.stale,
        "sources": section.sources,
    }


def page_out(page, sections: int | None = None) -> dict:
    count = sections if sections is not None else getattr(page, "visible_sections", 0) or 0
    return {
        "slug": page.slug,
        "kind": page.kind,
        "title": page.title,
        "status": getattr(page, "visible_status", "active"),  # as the reader may see it
        "updated_at": getattr(page, "visible_updated_at", None) or page.updated_at,
        # When its newest visible section was said (`updated_at`: when the wiki last changed it).
        "content_at": getattr(page, "visible_content_at", None),
        "status_detail": getattr(page, "status_detail", ""),
        "sections": count,
    }


def page_detail(*, user, page) -> dict:
    sections = selectors.page_sections_rendered(user=user, page=page)
    page.visible_updated_at = max((s.updated_at for s in sections), default=None)
    page.visible_content_at = max((s.occurred_at for s in sections), default=None)
    if page.visible_updated_at is None:  # only stale sections visible: their newest, not the page's
        page.visible_updated_at = selectors.visible_updated_at(user=user, page=page, include_stale=True)
    return {
        **page_out(page, sections=len(sections)),
        "aliases": page.entity.aliases,
        # made from the sections this reader sees (every reader of a page gets one)
        "summary": page_summary_for_reader(user=user, page=page),
        "sections": [section_out(s) for s in sections],
        "stale_sections": selectors.stale_section_count(user=user, page_ids=[page.pk]),
        # the stale sections this reader may confirm (sender, admin, steward); empty for others
        "stale_section_ids": permissions.confirmable_stale_ids(user=user, page=page),
    }


@router.get("/pages", response=list[PageOut])
def list_pages(request, filters: Query[PageListQuery]):
    user = acting_user(request, filters.user)
    pages = list(selectors.page_list(user=user, q=filters.q, kind=filters.kind))
    status.page_statuses_apply(user=user, pages=pages)
    return [page_out(p) for p in pages]


@router.get("/pages/{slug}", response=PageDetailOut)
def get_page(request, slug: str, user: str | None = None):
    acting = acting_user(request, user)
    return page_detail(user=acting, page=selectors.page_get_for_user(user=acting, slug=slug))


@router.post("/search", response=WikiSearchOut)
def search_pages(request, payload: WikiSearchIn):
    user = acting_user(request, payload.user)
    results = search.page_search(user=user, query=payload.query, top_k=payload.top_k)
    # A meeting series: one line, its other hit sections (occurrences of their own) in it.
    kept = {id(s) for s in series.series_fold([h.section for r in results for h in r["hits"]], notes=False)}
    for result in results:
        result["hits"] = [h for h in result["hits"] if id(h.section) in kept]
    pages = [r["page"] for r in results]
    status.page_statuses_apply(user=user, pages=pages)
    content = selectors.page_content_times(user=user, page_ids=[p.pk for p in pages])
    for page in pages:
        page.visible_content_at = content.get(page.pk)
    return {"results": [_page_hit_out(r) for r in results]}


def _page_hit_out(result: dict) -> dict:
    hits = [
        {"section": section_out(h.section), "score": h.score, "breakdown": h.breakdown}
        for h in result["hits"]
    ]
    return {"page": page_out(result["page"], sections=len(hits)), "score": result["score"], "sections": hits}


@router.post("/pages/{slug}/confirm", response=ConfirmOut)
def confirm_sections(request, slug: str, payload: ConfirmIn):
    user = acting_user(request, payload.user)
    page = selectors.page_get_for_user(user=user, slug=slug)
    sections = section_confirm(user=user, page=page, section_ids=payload.section_ids, reason=payload.reason)
    return {"confirmed": [s.pk for s in sections]}
