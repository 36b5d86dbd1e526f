"""A small domain-event bus: `publish(event, payload)` enqueues the subscribed skills.

Subscribers are (a) code subscriptions in `skills.registry` (`subscribe(...)` from an
AppConfig.ready, or a built-in's `events`) and (b) enabled `Skill` rows whose `events`
list the event (prompt-only skills added in admin). Each delivery is one django-q2 task
enqueued after the surrounding transaction commits, with its own delivery key so a retried
task does not run the skill twice. Each run is a SkillRun (trigger `event:<name>`).
"""

from __future__ import annotations

import uuid

from django.db import transaction
from django_q.tasks import async_task

from skills import registry
from skills.models import Skill

EVENTS = ("session.ended", "memory.created", "fact.confirmed", "document.uploaded")


def subscribers(event: str) -> list[str]:
    """Skill names that run on `event` (code subscriptions first, then admin-defined)."""
    names = [sub.skill for sub in registry.code_subscriptions(event)]
    disabled = set(Skill.objects.filter(name__in=names, enabled=False).values_list("name", flat=True))
    names = [n for n in names if n not in disabled]
    rows = Skill.objects.filter(enabled=True, builtin=False, events__contains=[event]).order_by("name")
    return names + [name for name in rows.values_list("name", flat=True) if name not in names]


def publish(event: str, payload: dict, *, tenant_id: int | None = None) -> list[str]:
    """Enqueue every skill subscribed to `event` once the current transaction commits.

    Returns the delivery keys (one per subscribed skill)."""
    keys = []
    for name in subscribers(event):
        key = uuid.uuid4().hex
        keys.append(key)
        transaction.on_commit(
            lambda name=name, key=key: async_task(
                "skills.tasks.skill_event_task",
                name,
                event,
                payload,
                tenant_id,
                key,
                task_name=f"skill:{name}:{event}",
            )
        )
    return keys
