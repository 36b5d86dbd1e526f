"""The payloads of the domain events the wiki sends (`skills.signals.domain_event`; every
field in docs/llm.md, Events): `fact.confirmed` and `page.updated`.

A page's sections have readers of their own (their container's members, or the whole
tenant), so each section listed carries its `acl` and its readers in words, and the page
event has no readers of its own: the bus gives a skill that runs for another scope only the
sections that scope may read, and nothing at all when it may read none of them.
"""

from __future__ import annotations

import hashlib

from django.conf import settings

from almanac.services.users import user_name
from skills.signals import domain_event
from wiki.models import Page, PageSection


def readers_words(acl: list[str], container_name: str) -> str:
    """Who may read a section, in words: the whole tenant, or its container's members."""
    tenant = next((key for key in acl if key.startswith("tenant:")), None)
    if tenant is not None:
        return f"everyone in {tenant.partition(':')[2]}"
    return f"the members of {container_name or ', '.join(acl)}"


def section_fields(section: PageSection) -> dict:
    """One section as an event names it: its id, title, an excerpt of EVENT_EXCERPT_CHARS
    (the rest through `GET /wiki/pages/{slug}`, as the reader may see it) and its readers."""
    limit = settings.EVENT_EXCERPT_CHARS
    return {
        "section_id": section.pk,
        "title": section.title,
        "container_name": section.container_name,
        "text": section.content[:limit],
        "text_truncated": len(section.content) > limit,
        "occurred_at": section.occurred_at.isoformat(),
        "acl": list(section.acl),
        "readers": readers_words(section.acl, section.container_name),
    }


def _page_fields(page: Page) -> dict:
    return {"page_id": page.pk, "slug": page.slug, "title": page.title, "kind": page.kind}


def fact_confirmed_payload(*, page: Page, sections: list[PageSection], user, reason: str) -> dict:
    """Stale sections confirmed current: who confirmed them, why, and the sections."""
    recalls = sorted({rid for s in sections for rid in s.confirmed_recall_ids})
    ids = ",".join(str(s.pk) for s in sections)
    return {
        "event_id": f"page:{page.pk}:confirmed:{ids}:recalls:{','.join(map(str, recalls))}",
        **_page_fields(page),
        "section_ids": [s.pk for s in sections],
        "sections": [section_fields(s) for s in sections],
        "user_id": user.pk,
        "user": user_name(user),
        "reason": reason,
    }


def pages_updated_announce(*, changed: list[PageSection], removed: list[dict], reason_of) -> None:
    """One `page.updated` per page whose sections' text changed or which lost sections in
    one write of a compile (`SectionWrites.flush`). `removed`: {section_id, page_id, acl}
    of the deleted sections; `reason_of(section)`: why it was written."""
    page_ids = {s.page_id for s in changed} | {r["page_id"] for r in removed}
    if not page_ids:
        return
    pages = Page.objects.in_bulk(sorted(page_ids))
    for page_id in sorted(page_ids):
        mine = sorted((s for s in changed if s.page_id == page_id), key=lambda s: s.pk)
        gone = [{"section_id": r["section_id"], "acl": r["acl"]} for r in removed if r["page_id"] == page_id]
        reasons = sorted({reason_of(s) for s in mine})
        payload = {
            "event_id": f"page:{page_id}:updated:{_change_digest(mine, gone)}",
            **_page_fields(pages[page_id]),
            "user_id": None,
            "user": None,
            "sections": [section_fields(s) for s in mine],
            "removed_sections": gone,
            "reason": "; ".join(reasons)[:500],
        }
        domain_event.send(
            sender=Page, event="page.updated", payload=payload, tenant_id=pages[page_id].tenant_id
        )


def _change_digest(changed: list[PageSection], removed: list[dict]) -> str:
    """The same change (the same sections in the same versions) has the same identity."""
    parts = [f"{s.pk}:{s.content_digest}" for s in changed] + [f"-{r['section_id']}" for r in removed]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]
