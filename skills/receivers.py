"""Receivers of the skills app: a domain event reaches the bus; after `migrate`, the
built-in skills are synced (so the admin lists every one from the start).

`SkillsConfig.ready` imports this module, which connects them.
"""

from __future__ import annotations

from django.apps import apps
from django.db import connections
from django.db.models.signals import post_migrate
from django.dispatch import receiver

from skills.signals import domain_event


@receiver(domain_event, dispatch_uid="skills.domain_event")
def _publish(sender, *, event: str, payload: dict, tenant_id: int | None = None, **kwargs) -> list[str]:
    from skills import bus

    return bus.publish(event, payload, tenant_id=tenant_id)


@receiver(post_migrate, sender=apps.get_app_config("skills"), dispatch_uid="skills_sync_builtins")
def _sync_builtins(sender, using="default", **kwargs) -> None:
    # Skipped when a partial migrate has not created the table yet.
    from skills.models import Skill
    from skills.services import skill_sync_builtins

    if Skill._meta.db_table in connections[using].introspection.table_names():
        skill_sync_builtins()
