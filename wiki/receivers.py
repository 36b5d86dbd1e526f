"""Receivers: what connectors announce (`connectors.signals`) reaches the wiki, and a change
of the entities list refreshes the matcher's cache.

The wiki reads connectors' events; connectors never import the wiki. Each receiver hands
over at once (docs/style.md, Where code goes: no logic in signals). `WikiConfig.ready`
imports this module, which connects them.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from connectors.signals import container_visibility_changed, event_ingested
from skills.signals import rows_for_skill, section_for_skill
from wiki.matching import entities_changed
from wiki.models import Entity
from wiki.selectors import pages_of_period
from wiki.services.backlog import inbox_drain_enqueue
from wiki.services.people import person_page_retire
from wiki.services.skill_sections import skill_section_write
from wiki.services.visibility import container_visibility_at_ingest


@receiver(event_ingested, dispatch_uid="wiki.event_ingested")
def _event_ingested(sender, *, tenant_id: int, **kwargs) -> None:
    """A new event is stored: once the ingest commits, the tenant's inbox is drained (one
    waiting drain per tenant: a burst enqueues one task, not one per event; a rolled-back
    batch enqueues nothing; the sweep catches a drain lost between commit and enqueue)."""
    transaction.on_commit(lambda: inbox_drain_enqueue(tenant_id))


@receiver(container_visibility_changed, dispatch_uid="wiki.container_visibility_changed")
def _container_visibility_changed(sender, *, tenant, container_key: str, public: bool, **kwargs) -> None:
    """A container turned private (or public): its sections follow inside the ingest's
    transaction, not when a worker compiles the event."""
    container_visibility_at_ingest(tenant=tenant, container_key=container_key, public=public)


@receiver(post_save, sender=Entity, dispatch_uid="wiki-entity-changed")
@receiver(post_delete, sender=Entity, dispatch_uid="wiki-entity-changed-delete")
def _entity_changed(sender, instance, **kwargs) -> None:
    entities_changed(instance.tenant_id)


@receiver(post_save, sender=get_user_model(), dispatch_uid="wiki.user_saved")
def _user_saved(sender, instance, created: bool, update_fields=None, **kwargs) -> None:
    """A user made a superuser or deactivated (in the admin, too) loses their person page at
    once, not at the next directory sync. A login (it saves `last_login` only) changes nothing."""
    if created or (update_fields and set(update_fields) <= {"last_login", "password"}):
        return
    person_page_retire(user=instance)


@receiver(rows_for_skill, dispatch_uid="wiki.rows_for_skill")
def _rows_for_skill(sender, *, source: str, user, since, until, **kwargs) -> list[dict] | None:
    """A reading skill's pages (the weekly report's), read through the user's access filter."""
    if source != "pages":
        return None
    return pages_of_period(user=user, since=since, until=until)


@receiver(section_for_skill, dispatch_uid="wiki.section_for_skill")
def _section_for_skill(
    sender,
    *,
    user,
    page: str,
    title: str,
    content: str,
    readers: list[str],
    thread_key: str,
    reason: str,
    **kwargs,
) -> int:
    """A prompt skill's finding kept as a page section read by its event's readers."""
    return skill_section_write(
        user=user,
        page=page,
        title=title,
        content=content,
        readers=readers,
        thread_key=thread_key,
        reason=reason,
    )
