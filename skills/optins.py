"""A user's choice of the scheduled skills that run for them (`BaseSkill.schedule_days`,
run by `skills.tasks.skill_optins_task`): set on the web settings page."""

from __future__ import annotations

from almanac.errors import ApplicationError
from skills import registry
from skills.models import SkillOptIn


def skill_optins(*, user) -> set[str]:
    """The scheduled skills `user` opted in to."""
    return set(SkillOptIn.objects.filter(user=user).values_list("skill_name", flat=True))


def skill_optin_set(*, user, name: str, on: bool) -> bool:
    """Opt `user` in to (or out of) scheduled skill `name`; returns whether anything changed."""
    if name not in registry.scheduled_names():
        raise ApplicationError(f"no scheduled skill {name!r}", status_code=404)
    if on:
        return SkillOptIn.objects.get_or_create(user=user, skill_name=name)[1]
    return SkillOptIn.objects.filter(user=user, skill_name=name).delete()[0] > 0
