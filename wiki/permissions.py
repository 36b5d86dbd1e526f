"""Permission rules of the wiki: who may confirm a stale section (`confirm_roles`).

Who may read a section is the section's own rule (`PageSection.objects.visible_to`).
"""

from __future__ import annotations

from almanac.selectors import user_tenant
from connectors.models import Event
from wiki.models import Page, PageSection, Steward
from wiki.selectors import person_handles


def recall_senders(sections) -> dict[int, set[str]]:
    """Recall event id → the handles (lowercase) of the recalled message's sender: the author
    of the item's content versions (the recall's own author when none is stored)."""
    pending = {rid for s in sections for rid in set(s.recall_event_ids) - set(s.confirmed_recall_ids)}
    if not pending:
        return {}
    recalls = list(
        Event.objects.filter(id__in=pending).values_list("id", "source_id", "external_id", "author")
    )
    originals: dict[tuple, set[str]] = {}
    rows = Event.objects.filter(
        source_id__in={r[1] for r in recalls}, external_id__in={r[2] for r in recalls}, kind=Event.Kind.EMAIL
    ).values_list("source_id", "external_id", "author")
    for source_id, external_id, author in rows:
        if author:
            originals.setdefault((source_id, external_id), set()).add(author.lower())
    return {
        rid: originals.get((source_id, external_id)) or ({author.lower()} if author else set())
        for rid, source_id, external_id, author in recalls
    }


def confirm_roles(*, user, sections) -> dict[int, str]:
    """Section id → why the user may confirm it ("admin", "steward", "sender"), for the stale
    sections they may confirm; missing: they may not. An admin is a superuser or staff with
    the `wiki.change_pagesection` permission; a steward is listed for the section's container
    (`Steward`); the sender sent every recalled message still unconfirmed in it."""
    sections = [s for s in sections if s.stale]
    if not sections or not user.is_authenticated:
        return {}
    if user.is_superuser or (user.is_staff and user.has_perm("wiki.change_pagesection")):
        return {s.pk: "admin" for s in sections}
    tenant = user_tenant(user)
    stewardships = list(Steward.objects.filter(tenant=tenant, user=user)) if tenant else []
    senders = recall_senders(sections)
    handles = set(person_handles(user))
    roles = {}
    for section in sections:
        pending = set(section.recall_event_ids) - set(section.confirmed_recall_ids)
        if any(st.covers(section.container_key) for st in stewardships):
            roles[section.pk] = "steward"
        elif pending and all(senders.get(rid, set()) & handles for rid in pending):
            roles[section.pk] = "sender"
    return roles


def confirmable_stale_ids(*, user, page: Page) -> list[int]:
    """The stale sections of the page the user may see and may confirm (`confirm_roles`)."""
    stale = list(
        PageSection.objects.visible_to(user, include_stale=True).filter(page=page, stale=True).order_by("id")
    )
    roles = confirm_roles(user=user, sections=stale)
    return [s.pk for s in stale if s.pk in roles]
