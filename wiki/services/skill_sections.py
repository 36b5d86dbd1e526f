"""Page sections written by prompt skills (`skills.signals.section_for_skill`): a skill's
finding about an event, on the page it names, read by the event's readers and no one else.

The section is keyed by the skill's `thread_key` (one per event), so a redelivered event
rewrites it instead of adding a copy. Its readers must be groups of the event's acting user:
a skill never publishes wider than the person whose action triggered it could read.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.selectors import user_group_keys, user_tenant
from wiki import folding
from wiki.models import Entity, Page
from wiki.services.entities import entity_ensure
from wiki.services.sections import SectionDraft, section_write


def _page_for(*, tenant, title: str, named_in: str) -> Page:
    """The page titled `title` (an entity of any kind with that folded name or alias), else a
    new topic page, its name known only where the section is (`named_in`)."""
    key = folding.fold(title)[:300]
    if not key:
        raise ApplicationError("the page title is empty once folded", status_code=422)
    entities = Entity.objects.filter(tenant=tenant)
    entity = entities.filter(key=key).order_by("id").first()
    entity = entity or entities.filter(alias_keys__contains=[key]).order_by("id").first()
    entity = entity or entity_ensure(tenant=tenant, kind=Entity.Kind.TOPIC, name=title, named_in=named_in)
    return Page.objects.select_for_update().get(entity=entity)


@transaction.atomic
def skill_section_write(
    *, user, page: str, title: str, content: str, readers: list[str], thread_key: str, reason: str
) -> int:
    """Write (or rewrite) the section `thread_key` on the page titled `page` with `readers`
    as its ACL; returns its id. 403 when a reader group is not one of `user`'s."""
    tenant = user_tenant(user)
    if tenant is None:
        raise ApplicationError("the acting user has no tenant", status_code=404)
    readers = sorted({r for r in readers if r})
    wider = set(readers) - set(user_group_keys(user))
    if not readers or wider:
        raise ApplicationError(
            f"a skill's section is read only by its event's readers, groups of the acting user: not {sorted(wider)}",
            status_code=403,
        )
    content = (content or "").strip()
    if not content:
        raise ApplicationError("the section is empty", status_code=422)
    target = _page_for(tenant=tenant, title=page, named_in=readers[0])
    now = timezone.now()
    draft = SectionDraft(
        thread_key=thread_key[:500],
        container_key=readers[0],
        container_name=reason,
        title=(title or "").strip(),
        content=content,
        occurred_at=now,
        acl=readers,
        authors=[],
        event_ids=[],
        source_list=[{"source": "skill", "url": "", "occurred_at": now.isoformat(), "ref": thread_key}],
    )
    section, _ = section_write(page=target, draft=draft, reason=reason)
    return section.pk
