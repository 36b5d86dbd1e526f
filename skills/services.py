"""Running skills. The one entry point other apps call is `skill_run`.

Outcome rules (also in docs/llm.md):
- LLM configured (`LLM_BASE_URL`): the LLM path; its JSON is validated against the output
  schema, repaired or retried (`skills.llm`). If it still fails, a built-in skill with an
  offline fallback returns the offline result (status `fallback`, the LLM error recorded),
  so callers always get a result; a prompt-only skill fails (`SkillFailed`).
- No LLM configured: the offline fallback (status `success`, `used_llm` false); a
  prompt-only skill fails.
- Invalid input: `ApplicationError` 422 (recorded as a failed run).
- Run by an event, a prompt skill that declares where its output goes keeps it there
  (`skills.prompt_skill.output_keep`) in the transaction that records the run: both or
  neither; an output that cannot be kept makes a failed run that kept nothing.
Every call writes exactly one `SkillRun` row (for `log_later` calls, a moment later).
`skills.trial.skill_test_run` (the admin's Test run) records and keeps nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

import jsonschema
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from almanac.buffer import WriteBuffer
from almanac.errors import ApplicationError
from almanac.search.rows import instance, select_list
from skills import llm, prompt_skill, registry
from skills.models import Skill, SkillRun
from skills.prompt_skill import PromptSkill

logger = logging.getLogger(__name__)


class SkillFailed(Exception):
    """A skill run that produced no result (the `SkillRun` row `run_id` says why)."""

    def __init__(self, message: str, run_id: int | None = None):
        super().__init__(message)
        self.message = message
        self.run_id = run_id


class SkillOutput(dict):
    """A run's output (valid against the skill's output schema), with `used_llm`: whether
    the LLM produced it (False for the offline path, also when it stood in for an LLM that
    failed), so a caller records the method that made what it keeps; and `run_id`, its
    `SkillRun` row (None while a `log_later` row waits in the buffer)."""

    def __init__(self, output: dict, *, used_llm: bool, run_id: int | None = None):
        super().__init__(output)
        self.used_llm = used_llm
        self.run_id = run_id


@dataclass
class _Outcome:
    output: dict | None = None
    status: str = SkillRun.Status.FAILED
    used_llm: bool = False
    attempts: int = 0
    llm_failed: bool = False
    errors: list[str] = field(default_factory=list)


def canonical_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def input_digest(input: dict) -> str:
    return hashlib.sha256(canonical_json(input).encode()).hexdigest()


def _strip_nul(value):
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_strip_nul(k): _strip_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_nul(v) for v in value]
    return value


def _storable(value):
    """A copy PostgreSQL jsonb accepts (only JSON types, no NUL characters)."""
    return _strip_nul(json.loads(canonical_json(value)))


def _has_nul(value) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_nul(v) for v in value)
    return False


def _stored_input(input, limit: int | None = None) -> tuple[dict, bool, str]:
    """(what the run log stores, whether it was cut, the input's digest): one serialization."""
    if not isinstance(input, dict):
        return {"_invalid": repr(input)[:1000]}, True, input_digest({"_invalid": repr(input)})
    limit = settings.SKILL_RUN_INPUT_MAX_CHARS if limit is None else limit
    text = canonical_json(input)
    digest = hashlib.sha256(text.encode()).hexdigest()
    if len(text) <= limit:
        return _strip_nul(json.loads(text)), False, digest
    return {"_truncated": True, "size": len(text), "preview": text[:limit]}, True, digest


# --- Skill rows ------------------------------------------------------------------------


def _builtin_fields(skill: registry.BaseSkill) -> dict:
    return {
        "version": skill.version,
        "description": skill.description,
        "input_schema": skill.input_schema,
        "output_schema": skill.output_schema,
        "events": list(skill.events),
        "builtin": True,
    }


@transaction.atomic
def skill_sync_builtin(*, name: str) -> Skill:
    """Upsert the `Skill` row of a built-in (keeps `enabled` as the admin set it)."""
    skill = registry.get_builtin(name)
    if skill is None:
        raise ApplicationError(f"unknown built-in skill {name!r}", status_code=404)
    fields = _builtin_fields(skill)
    # get_or_create copes with two workers registering the same built-in at once.
    row, created = Skill.objects.get_or_create(name=name, defaults=fields)
    if created:
        return row
    row = Skill.objects.select_for_update().get(pk=row.pk)
    changed = [k for k, v in fields.items() if getattr(row, k) != v]
    if changed:
        for key in changed:
            setattr(row, key, fields[key])
        row._change_reason = "built-in skill updated from code"
        row.save(update_fields=[*changed, "updated_at"])
    return row


def skill_sync_builtins() -> list[Skill]:
    return [skill_sync_builtin(name=name) for name in registry.builtin_names()]


_ROW_FIELDS = ("id", "name", "version", "builtin", "enabled")


def _builtin_row(name: str) -> Skill | None:
    """The row's own columns of a built-in (raw: a context call's summaries need it)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {select_list(Skill, 's', _ROW_FIELDS)} FROM {Skill._meta.db_table} s WHERE s.name = %s",
            [name],
        )
        row = cursor.fetchone()
    return instance(Skill, row, _ROW_FIELDS) if row else None


def skill_resolve(name: str) -> tuple[registry.BaseSkill, Skill]:
    """The skill and its row (unknown → ApplicationError 404); a request running a skill
    several times resolves it once and passes it as `skill_run(prepared=...)`."""
    builtin = registry.get_builtin(name)
    if builtin is not None:
        # The contract of a built-in comes from code: only these columns are the row's.
        row = _builtin_row(name)
        if row is None or row.version != builtin.version:
            row = skill_sync_builtin(name=name)
        return builtin, row
    row = Skill.objects.filter(name=name, builtin=False).first()
    if row is None:
        raise ApplicationError(f"unknown skill {name!r}", extra={"skill": name}, status_code=404)
    return PromptSkill(row), row


# --- Running ---------------------------------------------------------------------------


def broken_contract(skill: registry.BaseSkill) -> str | None:
    """An admin-made skill whose schemas are not valid JSON schemas cannot run."""
    for label, schema in (("input", skill.input_schema), ("output", skill.output_schema)):
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            return f"the skill's {label} schema is not a valid JSON schema: {exc.message}"
    return None


def input_problem(skill: registry.BaseSkill, input) -> str | None:
    if not isinstance(input, dict):
        return "input must be a JSON object"
    try:
        llm.validate(input, skill.input_schema)
    except llm.ReplyError as exc:
        return str(exc).replace("The JSON does not match the schema", "input does not match the schema")
    if _has_nul(input):
        return "input contains NUL characters"
    return None


def _run_llm(skill: registry.BaseSkill, input: dict, outcome: _Outcome) -> None:
    client = llm.LLMClient.from_settings()
    try:
        outcome.output = skill.run_llm(input, client)
        outcome.status, outcome.used_llm = SkillRun.Status.SUCCESS, True
    except Exception as exc:  # an LLM failure or a bug in a skill's LLM path: fall back
        logger.warning("skill %s: LLM path failed: %s", skill.name, exc)
        outcome.llm_failed = True
        outcome.errors.append(f"LLM: {exc}")
    outcome.attempts = client.attempts
    # Keep what went wrong on the way, even when a later attempt succeeded.
    outcome.errors.extend(client.errors)


def _execute(skill: registry.BaseSkill, input: dict) -> _Outcome:
    outcome = _Outcome()
    if settings.LLM_BASE_URL:
        _run_llm(skill, input, outcome)
        if outcome.output is not None:
            return outcome
    if not skill.has_offline:
        outcome.errors.append(
            "no LLM configured (LLM_BASE_URL)" if not settings.LLM_BASE_URL else "no offline fallback"
        )
        return outcome
    try:
        outcome.output = skill.run_offline(input)
        outcome.status = SkillRun.Status.FALLBACK if outcome.llm_failed else SkillRun.Status.SUCCESS
    except Exception as exc:
        logger.exception("skill %s: offline path failed", skill.name)
        outcome.errors.append(f"offline: {type(exc).__name__}: {exc}")
    return outcome


def _run_row(
    *,
    row: Skill,
    name: str,
    input,
    trigger: str,
    tenant,
    outcome: _Outcome,
    started: float,
    event_key: str,
    input_limit: int | None = None,
) -> SkillRun:
    stored, truncated, digest = _stored_input(input, input_limit)
    return SkillRun(
        skill_name=name,
        version=row.version if row else "",
        trigger=(trigger or "api")[:120],
        tenant=tenant,
        input_digest=digest,
        input=stored,
        input_truncated=truncated,
        output=_storable(outcome.output) if outcome.output is not None else None,
        status=outcome.status,
        used_llm=outcome.used_llm,
        attempts=outcome.attempts,
        duration_ms=int((time.monotonic() - started) * 1000),
        error="\n".join(outcome.errors)[:10_000].replace("\x00", ""),
        event_key=event_key,
    )


def _write_runs(batch: list[SkillRun]) -> int:
    return len(SkillRun.objects.bulk_create(batch, batch_size=500))


# Successful runs of hot paths (the context call's page summaries), written in batches
# off the request path (almanac.buffer): their rows appear up to SKILL_RUN_FLUSH_SECONDS
# later, with that flush's created_at.
_later = WriteBuffer("skill runs", _write_runs, lambda: settings.SKILL_RUN_FLUSH_SECONDS)


def flush_runs() -> int:
    """Write the buffered runs now (tests, benchmarks, shutdown); returns how many."""
    return _later.flush()


def skill_run(
    *,
    name: str,
    input: dict,
    trigger: str = "api",
    tenant=None,
    event_key: str = "",
    log_later: bool = False,
    prepared: tuple[registry.BaseSkill, Skill] | None = None,
) -> SkillOutput:
    """Run skill `name` on `input`; returns the output (valid against the output schema),
    which says whether the LLM produced it (`SkillOutput.used_llm`).

    1. resolve the skill (built-in or prompt-only row), unknown → ApplicationError 404;
    2. validate input → ApplicationError 422; disabled → SkillFailed;
    3. LLM path when configured, else/on failure the offline fallback;
    4. validate the output; 5. record one SkillRun; raise SkillFailed if no result.

    `log_later`: a successful run's SkillRun is buffered and written in a batch off the
    request path (inside a transaction it is written now, so it commits or rolls back
    with it), with its input cut to SKILL_RUN_LATER_INPUT_MAX_CHARS (the digest covers
    all of it); failures are always written at once and whole, their id goes into the error.
    `prepared`: what `skill_resolve(name)` returned earlier in the same request.
    """
    started = time.monotonic()
    skill, row = prepared or skill_resolve(name)
    broken = broken_contract(skill) if not row.builtin else None
    problem = None if broken else input_problem(skill, input)
    outcome = _Outcome(errors=[e for e in (broken, problem) if e])
    if not outcome.errors and not row.enabled:
        outcome.errors.append(f"skill {name!r} is disabled")
    keeps = prompt_skill.keeps(row, trigger)
    if not outcome.errors and keeps and prompt_skill.made_by_prompt_skill(input):
        outcome.status = SkillRun.Status.SKIPPED
        outcome.errors.append("skipped: the event came from what a prompt skill kept (no skill feeds on it)")
    elif not outcome.errors:
        outcome = _execute(skill, input)
    invalid = output_problem(skill, outcome.output) if outcome.output is not None else None
    if invalid:
        outcome.errors.append(invalid)
        outcome.output, outcome.status = None, SkillRun.Status.FAILED
    later = log_later and outcome.output is not None and not problem and not connection.in_atomic_block
    run = _run_row(
        row=row,
        name=name,
        input=input,
        trigger=trigger,
        tenant=tenant,
        outcome=outcome,
        started=started,
        event_key=event_key,
        input_limit=settings.SKILL_RUN_LATER_INPUT_MAX_CHARS if later else None,
    )
    if later:
        _later.add([run])
        return SkillOutput(outcome.output, used_llm=outcome.used_llm)
    if keeps and outcome.output is not None:
        _save_kept(run, row=row, input=input, tenant=tenant)
    else:
        run.save()
    if problem:
        raise ApplicationError(problem, extra={"skill": name, "run_id": run.id}, status_code=422)
    if run.status == SkillRun.Status.FAILED or outcome.output is None:
        raise SkillFailed(f"skill {name!r} failed: {run.error}", run.id)
    return SkillOutput(outcome.output, used_llm=outcome.used_llm, run_id=run.id)


def _save_kept(run: SkillRun, *, row: Skill, input: dict, tenant) -> None:
    """Save `run` with its output kept where `row` says, in one transaction (a retried
    delivery finds the run done and the output kept, or neither). Output that cannot be
    kept: the run is saved failed, with its output (to see why) and nothing kept."""
    try:
        with transaction.atomic():
            run.kept = prompt_skill.output_keep(
                row, input, run.output, tenant=tenant, ref=run.input_digest[:16]
            )
            run.save()
    except ApplicationError as exc:
        run.pk, run.kept, run.status = None, None, SkillRun.Status.FAILED
        run.error = "\n".join(e for e in (run.error, f"output not kept: {exc.message}") if e)[:10_000]
        run.save()


def output_problem(skill: registry.BaseSkill, output) -> str | None:
    """Why `output` breaks the skill's output schema (the first violation), or None."""
    try:
        llm.validate(output, skill.output_schema)
    except llm.ReplyError as exc:
        return str(exc).replace(
            "The JSON does not match the schema", "output does not match the output schema"
        )
    return None


def skill_output_valid(name: str, output, *, skill: registry.BaseSkill | None = None) -> bool:
    """Does `output` satisfy the output contract of skill `name`?"""
    return output_problem(skill or skill_resolve(name)[0], output) is None


# --- Retention and redaction -----------------------------------------------------------


def skillrun_purge(*, older_than_days: int, batch: int = 5000) -> int:
    """Delete runs older than `older_than_days` (in batches, so no long lock). Returns the count."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    total = 0
    while True:
        ids = list(SkillRun.objects.filter(created_at__lt=cutoff).values_list("id", flat=True)[:batch])
        if not ids:
            return total
        total += SkillRun.objects.filter(id__in=ids).delete()[0]


def _json_escaped(text: str) -> str:
    # As PostgreSQL renders a jsonb string as text: `"`, `\` and control characters
    # escaped, everything else (Chinese included) as itself.
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _json_forms(text: str) -> list[str]:
    """How `text` reads in a jsonb column cast to text: inside a string value (escaped once)
    and inside the preview of a truncated input (canonical JSON kept as a string: twice)."""
    once = _json_escaped(text)
    return list(dict.fromkeys([once, _json_escaped(once)]))


@transaction.atomic
def skillrun_redact(*, contains: str, tenant=None) -> int:
    """Blank input, output and error of the runs that mention `contains` (a purged memory's
    text must not survive in the run log). Returns how many runs were redacted."""
    if not contains or not contains.strip():
        raise ApplicationError("nothing to redact", status_code=422)
    qs = SkillRun.objects.annotate(_in=Cast("input", TextField()), _out=Cast("output", TextField()))
    match = Q(error__icontains=contains)
    for form in _json_forms(contains):
        match |= Q(_in__icontains=form) | Q(_out__icontains=form)
    qs = qs.filter(match)
    if tenant is not None:
        qs = qs.filter(tenant=tenant)
    return SkillRun.objects.filter(id__in=qs.values("id")).update(
        input={"_redacted": True}, output=None, error="[redacted]", input_truncated=True
    )
