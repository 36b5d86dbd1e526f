"""django-q2 tasks of the skills app."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.models import Tenant
from skills import registry
from skills.acting import skill_run_for
from skills.models import SkillOptIn, SkillRun
from skills.services import SkillFailed, SkillOutput, skill_run, skillrun_purge
from skills.signals import memory_for_skill

logger = logging.getLogger(__name__)

SCHEDULES = [
    {"name": "skills-run-purge", "func": "skills.tasks.skillrun_purge_task", "minutes": 24 * 60},
    {"name": "skills-opted-in", "func": "skills.tasks.skill_optins_task", "minutes": 60},
]

_DONE = (SkillRun.Status.SUCCESS, SkillRun.Status.FALLBACK)


def skill_event_task(name: str, event: str, payload: dict, tenant_id: int | None, event_key: str) -> None:
    """Run skill `name` for one event delivery, once per `event_key` (skills.bus: the same
    event, skill and version): a delivery whose key has a run already runs nothing again (a
    successful run's output is handed to the subscriber's `on_output` again, which is
    idempotent, in case the first delivery stopped before it). Two workers with the same
    key at once: one runs it, the other waits for it (a lock per key) and finds its run."""
    with _key_lock(event_key):
        ran = SkillRun.objects.filter(event_key=event_key).order_by("id").first()
        if ran is None:
            _event_run(name, event, payload, tenant_id, event_key)
            return
    sub = registry.subscription(event, name)
    if ran.status in _DONE and sub.on_output:
        sub.on_output(payload, SkillOutput(ran.output, used_llm=ran.used_llm, run_id=ran.pk))


def _event_run(name: str, event: str, payload: dict, tenant_id: int | None, event_key: str) -> None:
    sub = registry.subscription(event, name)
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


@contextmanager
def _key_lock(key: str):
    """A session lock on the delivery key (not a transaction: a skill's LLM call may take
    a while), released however the run ends."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [f"skill-event:{key}"])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [f"skill-event:{key}"])


def skillrun_purge_task() -> int:
    """Daily: drop runs past SKILL_RUN_RETENTION_DAYS (idempotent)."""
    return skillrun_purge(older_than_days=settings.SKILL_RUN_RETENTION_DAYS)


def skill_optins_task() -> int:
    """Hourly: run each opted-in skill whose period has passed for its user (trigger
    `schedule`) and keep what it says as a memory of that user. Returns how many ran."""
    ran = 0
    for name in registry.scheduled_names():
        due = timezone.now() - timedelta(days=registry.get_builtin(name).schedule_days)
        optins = SkillOptIn.objects.filter(skill_name=name, user__is_active=True)
        ids = optins.filter(Q(last_run_at__isnull=True) | Q(last_run_at__lte=due)).values_list(
            "id", flat=True
        )
        ran += sum(skill_optin_run(optin_id=pk, due=due) for pk in list(ids))
    return ran


@transaction.atomic
def skill_optin_run(*, optin_id: int, due) -> bool:
    """One user's scheduled run, unless another worker has it or ran it since `due`."""
    optin = (
        SkillOptIn.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("user")
        .filter(pk=optin_id)
        .filter(Q(last_run_at__isnull=True) | Q(last_run_at__lte=due))
        .first()
    )
    if optin is None:
        return False
    optin.last_run_at = timezone.now()
    optin.save(update_fields=["last_run_at"])
    try:
        output = skill_run_for(user=optin.user, name=optin.skill_name, input={}, trigger="schedule")
    except (SkillFailed, ApplicationError) as exc:
        logger.warning("scheduled %s for user %s failed: %s", optin.skill_name, optin.user_id, exc)
        return False
    memory = registry.get_builtin(optin.skill_name).memory_of(output)
    if memory is not None:
        memory_for_skill.send(sender=SkillOptIn, user=optin.user, reason="schedule", **memory)
    return True
