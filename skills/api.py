"""Skills endpoints (docs/api.md, Skills). Thin: resolve the acting user, call `skills.acting`."""

from __future__ import annotations

from ninja import Router

from almanac.auth import acting_user
from almanac.errors import ApplicationError
from skills import acting
from skills.schemas import SkillListOut, SkillRunIn, SkillRunOut
from skills.services import SkillFailed

router = Router(tags=["skills"])


@router.get("", response=SkillListOut)
def list_skills(request, user: str | None = None):
    """The skills the caller may run for `user`: every enabled skill (docs/api.md, Skills)."""
    acting_user(request, user)
    return {"skills": acting.skills_runnable()}


@router.post("/{name}/run", response=SkillRunOut)
def run_skill(request, name: str, payload: SkillRunIn):
    """Run skill `name` for `user` on `input`; recorded as a SkillRun with trigger `api`."""
    user = acting_user(request, payload.user)
    try:
        output = acting.skill_run_for(user=user, name=name, input=payload.input, trigger="api")
    except SkillFailed as exc:
        raise ApplicationError(exc.message, extra={"run_id": exc.run_id}, status_code=503) from exc
    return {"output": output, "run_id": output.run_id, "used_llm": output.used_llm}
