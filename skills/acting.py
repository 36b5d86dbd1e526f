"""Running a skill for a user: the Skills API and the schedule (docs/api.md, Skills).

Which skills a caller may run for a user: every enabled skill, built-in or made in the
admin, through an agent key that may act for users (for a user of its tenant) or logged in
(for oneself). A disabled or unknown skill is not found (404). That is safe because a skill
reads nothing but its input, except the fields a reading skill names (`BaseSkill.reads`,
e.g. the weekly report's memories and pages): those are never taken from the caller (the
caller's input schema leaves them out, so sending them is a 422) but read here for the
acting user, through the owning app's access filter (`skills.signals.rows_for_skill`).
What a user may not see never enters the run.
"""

from __future__ import annotations

import re

import jsonschema

from almanac.errors import ApplicationError
from almanac.selectors import user_tenant
from skills import llm, registry
from skills.bus import EVENTS
from skills.models import Skill
from skills.services import SkillOutput, skill_resolve, skill_run
from skills.signals import rows_for_skill


def runnable(name: str) -> tuple[registry.BaseSkill, Skill]:
    """The skill and its row, if a user may run it (else ApplicationError 404)."""
    try:
        skill, row = skill_resolve(name)
    except ApplicationError as exc:
        raise ApplicationError(f"no skill {name!r}", extra={"skill": name}, status_code=404) from exc
    if not row.enabled:
        raise ApplicationError(f"no skill {name!r}", extra={"skill": name}, status_code=404)
    return skill, row


def skills_runnable() -> list[dict]:
    """What a user may run (`runnable`), each with its contract as a caller sees it."""
    names = registry.builtin_names()
    names += list(Skill.objects.filter(builtin=False).values_list("name", flat=True))
    listed = []
    for name in sorted(set(names)):
        try:
            skill, row = runnable(name)
        except ApplicationError:
            continue
        listed.append(skill_described(skill, row))
    return listed


def skill_described(skill: registry.BaseSkill, row: Skill) -> dict:
    return {
        "name": row.name,
        "version": row.version,
        "description": row.description,
        "input_schema": skill.caller_schema(),
        "output_schema": skill.output_schema,
        "triggers": skill_triggers(skill, row),
    }


def skill_triggers(skill: registry.BaseSkill, row: Skill) -> list[str]:
    """How the skill runs: `api` always, `event:<name>` per event it is subscribed to,
    `schedule` for one users can opt in to (`BaseSkill.schedule_days`)."""
    events = {
        sub.event for event in EVENTS for sub in registry.code_subscriptions(event) if sub.skill == row.name
    }
    events |= set(row.events or ())
    triggers = ["api", *(f"event:{e}" for e in sorted(events))]
    if skill.schedule_days:
        triggers.append("schedule")
    return triggers


def caller_input_check(skill: registry.BaseSkill, input) -> None:
    """422 naming the field (`field`: its path in the input, "" for the object itself) when
    `input` does not fit the caller's input schema."""
    if not isinstance(input, dict):
        raise ApplicationError("input must be a JSON object", extra={"field": ""}, status_code=422)
    validator = jsonschema.Draft202012Validator(
        skill.caller_schema(), format_checker=jsonschema.FormatChecker()
    )
    error = jsonschema.exceptions.best_match(validator.iter_errors(input))
    if error is None:
        return
    field = "/".join(str(p) for p in error.absolute_path)
    if error.validator in ("required", "additionalProperties"):  # the field is in the message
        field = "/".join([field, *_quoted(error.message)[:1]]).strip("/")
    raise ApplicationError(
        f"input does not match the schema {llm.validation_message(error)}",
        extra={"skill": skill.name, "field": field},
        status_code=422,
    )


def _quoted(message: str) -> list[str]:
    return re.findall(r"'([^']*)'", message)


def rows_read(skill: registry.BaseSkill, *, user, input: dict) -> dict:
    """The fields `skill.reads`, each read for `user` by the app that owns its source."""
    if not skill.reads:
        return {}
    window = skill.reading(input)
    found = {}
    for field, source in skill.reads.items():
        answers = rows_for_skill.send(sender=Skill, source=source, user=user, **window)
        rows = [rows for _, rows in answers if rows is not None]
        found[field] = rows[0] if rows else []
    return found


def skill_run_for(*, user, name: str, input, trigger: str) -> SkillOutput:
    """Run skill `name` for `user` on the caller's `input` (recorded with `trigger`): the
    input checked against the caller's schema (422 naming the field), the fields the skill
    reads filled for that user, then `skill_run`."""
    skill, row = runnable(name)
    caller_input_check(skill, input)
    full = {**input, **rows_read(skill, user=user, input=input)}
    return skill_run(name=name, input=full, trigger=trigger, tenant=user_tenant(user), prepared=(skill, row))
