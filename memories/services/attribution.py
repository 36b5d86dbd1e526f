"""Scope attribution (docs/design.md, Memories: write): which scope a fact said in a conversation is
written to, read from what it says and who said it.

1. About the speaker ("I", "my", "我", "个人"): their own scope, whatever team it names.
2. A company-wide statement ("全公司…", "everyone in the company…", "company policy"; the
   company's name alone is none: it is in most of its people's sentences): the tenant's scope when the speaker may speak for the company (a tenant
   admin, or a governor of memories: `memories.change_memory`); otherwise their own scope,
   marked for review.
3. A project or department named (its name or key, in Chinese or English, any case, whole
   words in Latin script): that unit's scope when the speaker belongs to it; when it names
   one the speaker is not in, their own scope, marked for review (li of Zeus saying "our
   team moved the Apollo launch" must not share it with Zeus, nor tell Apollo).
4. "我们项目组" / "our team" → the speaker's project, "我们部门" / "our department" → their
   department, when they have exactly one (or the text names one of theirs).
5. Anything else, or anything ambiguous: the speaker's own scope.

Marked for review: `needs_review` on the memory, the reason in `meta["review"]`; governors
find them in the admin (filter "needs review") and move or clear them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction

from almanac.models import Department, Project, UserProfile
from almanac.search.text import CJK
from almanac.selectors import user_group_keys
from memories.constants import (
    DEPT_CUES_EN,
    DEPT_CUES_ZH,
    PERSONAL_CUES_EN,
    PERSONAL_CUES_ZH,
    PROJECT_CUES_EN,
    PROJECT_CUES_ZH,
)
from memories.models import Memory
from memories.permissions import may_speak_for_company
from memories.services.scopes import user_units

# What the whole company is told: "全公司", "公司所有员工", "company-wide", "company policy".
COMPANY_CUES = re.compile(
    r"全公司|公司全体|公司(?:所有|全部)(?:人|员工|同事|部门)|所有员工|全体员工|全员|公司(?:规定|政策|制度|要求)|"
    r"\b(?:everyone (?:in|at|across) the company|the (?:whole|entire) company|company[- ]wide|all (?:employees|staff)|"
    r"every employee|across the company|company (?:policy|rule|rules|policies))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Attribution:
    """Where a fact goes; `review` (why a person should look at it) when it was kept private
    because it names a unit or the company the speaker may not write for."""

    scope: str
    scope_key: str | None = None
    review: dict | None = None


def _pattern(name: str) -> re.Pattern:
    """`name` as said in a text: any case; a Latin name as a whole word ("Apollo" not in
    "Apollonia", "Sales" not in "wholesales")."""
    body = re.escape(name.strip())
    if CJK.search(name):
        return re.compile(body, re.IGNORECASE)
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", re.IGNORECASE)


def _says(text: str, *names: str) -> bool:
    return any(name and len(name.strip()) > 1 and _pattern(name).search(text) for name in names)


def named_units(*, tenant_id: int, text: str) -> list:
    """The departments and projects of the tenant `text` names (by name or key)."""
    units = [*Department.objects.filter(tenant_id=tenant_id), *Project.objects.filter(tenant_id=tenant_id)]
    return [unit for unit in units if _says(text, unit.name, unit.key)]


def _scope_of(unit) -> str:
    return Memory.Scope.DEPT if isinstance(unit, Department) else Memory.Scope.PROJECT


def scope_attribution(*, user, text: str) -> Attribution:
    """Where a fact `user` said goes (see the module's steps)."""
    if PERSONAL_CUES_ZH.search(text) or PERSONAL_CUES_EN.search(text):
        return Attribution(Memory.Scope.USER)
    profile = UserProfile.objects.select_related("tenant").filter(user=user).first()
    if profile is None:
        return Attribution(Memory.Scope.USER)
    tenant = profile.tenant
    if COMPANY_CUES.search(text):
        if may_speak_for_company(user):
            return Attribution(Memory.Scope.TENANT, tenant.slug)
        return Attribution(Memory.Scope.USER, review={"reason": "company-wide", "named": [tenant.group_key]})
    keys = set(user_group_keys(user))
    named = named_units(tenant_id=tenant.pk, text=text)
    foreign = [u for u in named if u.group_key not in keys]
    if foreign:
        return Attribution(
            Memory.Scope.USER,
            review={"reason": "names-other-unit", "named": sorted(u.group_key for u in foreign)},
        )
    if len(named) == 1:
        return Attribution(_scope_of(named[0]), named[0].key)
    if named:
        return Attribution(Memory.Scope.USER)  # several of the speaker's own: which one is a guess
    return _by_cue(user=user, text=text, keys=keys)


def _by_cue(*, user, text: str, keys: set[str]) -> Attribution:
    """ "我们项目组"/"our team" → the speaker's project, "我们部门"/"our department" → their
    department, when they have exactly one; otherwise (or both cues) their own scope."""
    project_cue = any(c in text for c in PROJECT_CUES_ZH) or bool(PROJECT_CUES_EN.search(text))
    dept_cue = any(c in text for c in DEPT_CUES_ZH) or bool(DEPT_CUES_EN.search(text))
    if project_cue == dept_cue:
        return Attribution(Memory.Scope.USER)
    scope = Memory.Scope.PROJECT if project_cue else Memory.Scope.DEPT
    units = [u for u in user_units(user=user, scope=scope) if u.group_key in keys]
    if len(units) != 1:
        # None, or several and none named: guessing would share the fact with another team.
        return Attribution(Memory.Scope.USER)
    return Attribution(scope, units[0].key)


@transaction.atomic
def memories_mark_reviewed(*, memories, user, reason: str = "admin:reviewed") -> int:
    """Take `memories` off the review queue (a governor looked at their scope), each with a
    history row naming who did; returns how many."""
    done = 0
    for memory in memories.filter(needs_review=True).select_for_update(of=("self",)):
        memory.needs_review = False
        memory._history_user = user
        memory._change_reason = reason
        memory.save(update_fields=["needs_review"])
        done += 1
    return done
