"""django-q2 tasks of the skills app."""

from __future__ import annotations

import logging

from django.conf import settings

from almanac.errors import ApplicationError
from almanac.models import Tenant
from skills import registry
from skills.models import SkillRun
from skills.services import SkillFailed, skill_run, skillrun_purge

logger = logging.getLogger(__name__)

SCHEDULES = [{"name": "skills-run-purge", "func": "skills.tasks.skillrun_purge_task", "minutes": 24 * 60}]

_DONE = (SkillRun.Status.SUCCESS, SkillRun.Status.FALLBACK)


def skill_event_task(name: str, event: str, payload: dict, tenant_id: int | None, event_key: str) -> None:
    """Run skill `name` for one event delivery. Idempotent per `event_key`: a retried task
    reuses the recorded output instead of running the skill again."""
    sub = registry.subscription(event, name)
    done = SkillRun.objects.filter(event_key=event_key, status__in=_DONE).first()
    if done is not None:
        output = done.output
    else:
        skill_input = sub.to_input(payload) if sub.to_input else payload
        if skill_input is None:
            return  # the subscriber said this payload is not for it
        tenant = Tenant.objects.filter(id=tenant_id).first() if tenant_id else None
        try:
            output = skill_run(
                name=name, input=skill_input, trigger=f"event:{event}", tenant=tenant, event_key=event_key
            )
        except (SkillFailed, ApplicationError) as exc:
            # Recorded in SkillRun; retrying the same input would fail the same way.
            logger.warning("skill %s on %s failed: %s", name, event, exc)
            return
    if sub.on_output:
        sub.on_output(payload, output)


def skillrun_purge_task() -> int:
    """Daily: drop runs past SKILL_RUN_RETENTION_DAYS (idempotent)."""
    return skillrun_purge(older_than_days=settings.SKILL_RUN_RETENTION_DAYS)
