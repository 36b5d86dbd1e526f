"""Reads of the skills app (skills and runs are admin/governance data, not per-user)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from skills.models import Skill, SkillRun


def skill_list(*, enabled: bool | None = None) -> QuerySet[Skill]:
    qs = Skill.objects.all()
    return qs if enabled is None else qs.filter(enabled=enabled)


def skill_get(*, name: str) -> Skill:
    skill = Skill.objects.filter(name=name).first()
    if skill is None:
        raise Http404(f"no skill {name!r}")
    return skill


def skillrun_list(
    *, skill_name: str | None = None, status: str | None = None, tenant=None
) -> QuerySet[SkillRun]:
    qs = SkillRun.objects.all()
    if skill_name:
        qs = qs.filter(skill_name=skill_name)
    if status:
        qs = qs.filter(status=status)
    if tenant is not None:
        qs = qs.filter(tenant=tenant)
    return qs
