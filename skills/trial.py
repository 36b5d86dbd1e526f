"""The admin's Test run of a prompt skill: the prompt sent, the output and its validation on
sample input, through the same LLM path as a real run. No `SkillRun` is written (a test is
no run of the skill: it counts in no statistics) and nothing is kept."""

from __future__ import annotations

from django.conf import settings

from almanac.errors import ApplicationError
from skills import llm, prompt_skill
from skills.models import Skill
from skills.services import broken_contract, input_problem, output_problem, skill_resolve


def skill_test_run(*, name: str, input) -> dict:
    """The admin's Test run of prompt skill `name` on sample `input`: {"messages": the prompt
    sent, "output", "valid", "errors": each attempt's problem (validation included), "kept":
    the texts an event's run would keep}. Records no SkillRun and keeps nothing."""
    skill, row = skill_resolve(name)
    if row.builtin:
        raise ApplicationError("only prompt skills have a test run", status_code=422)
    result = {"messages": [], "output": None, "valid": False, "errors": [], "kept": []}
    problem = broken_contract(skill) or input_problem(skill, input)
    if problem:
        result["errors"].append(problem)
        return result
    result["messages"] = skill.messages(input)
    if not settings.LLM_BASE_URL:
        result["errors"].append("no LLM configured (LLM_BASE_URL)")
        return result
    client = llm.LLMClient.from_settings()
    try:
        result["output"] = skill.run_llm(input, client)
    except llm.LLMError as exc:
        result["errors"] = [*client.errors, str(exc)]
        return result
    result["errors"] = list(client.errors)
    problem = output_problem(skill, result["output"])
    result["valid"] = problem is None
    if problem:
        result["errors"].append(problem)
    elif row.output_to != Skill.OutputTo.NONE:
        try:
            result["kept"] = prompt_skill.output_texts(row, result["output"])
        except ApplicationError as exc:
            result["errors"].append(f"output not kept: {exc.message}")
    return result
