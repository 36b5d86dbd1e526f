"""Running a skill (skills.services.skill_run): the outcome rules, the run log, input checks."""

import json

import pytest

from almanac.errors import ApplicationError
from skills.models import Skill, SkillRun
from skills.services import SkillFailed, input_digest, skill_output_valid, skill_run, skill_sync_builtins

pytestmark = pytest.mark.django_db


def test_skill_run_records_a_run(settings, tenant):
    settings.LLM_BASE_URL = ""
    skill_run(name="fact_extract", input={"text": "I prefer tea over coffee."}, trigger="test", tenant=tenant)
    run = SkillRun.objects.get()
    assert (run.skill_name, run.status, run.used_llm, run.attempts, run.trigger) == (
        "fact_extract",
        "success",
        False,
        0,
        "test",
    )
    assert run.tenant == tenant and len(run.input_digest) == 64 and run.output["facts"]
    assert Skill.objects.get(name="fact_extract").builtin


def test_invalid_input_is_422_and_recorded(settings):
    settings.LLM_BASE_URL = ""
    with pytest.raises(ApplicationError) as info:
        skill_run(name="fact_extract", input={"text": 42})
    assert info.value.status_code == 422 and "text" in info.value.message
    with pytest.raises(ApplicationError) as info:
        skill_run(name="summarize", input={"text": "x", "max_tokens": 0})
    assert info.value.status_code == 422
    assert list(SkillRun.objects.values_list("status", flat=True)) == ["failed", "failed"]


def test_unknown_skill_is_404():
    with pytest.raises(ApplicationError) as info:
        skill_run(name="nope", input={})
    assert info.value.status_code == 404


def test_disabled_skill_fails(settings):
    settings.LLM_BASE_URL = ""
    skill_run(name="summarize", input={"text": "a", "max_tokens": 5})
    Skill.objects.filter(name="summarize").update(enabled=False)
    with pytest.raises(SkillFailed) as info:
        skill_run(name="summarize", input={"text": "a", "max_tokens": 5})
    assert SkillRun.objects.get(id=info.value.run_id).status == "failed"


def test_prompt_only_skill_without_llm_fails(settings):
    settings.LLM_BASE_URL = ""
    Skill.objects.create(name="team_digest", prompt="Write a report", output_schema={"type": "object"})
    with pytest.raises(SkillFailed):
        skill_run(name="team_digest", input={"text": "x"})


def test_skill_output_valid():
    assert skill_output_valid("summarize", {"summary": "ok"})
    assert not skill_output_valid("summarize", {"summary": 1})
    assert not skill_output_valid(
        "fact_extract", {"facts": [{"text": "x", "type": "opinion", "importance": 1, "occurred_at": None}]}
    )


def test_nul_characters_are_rejected_and_still_recorded(settings):
    settings.LLM_BASE_URL = ""
    with pytest.raises(ApplicationError) as info:
        skill_run(name="fact_extract", input={"text": "I prefer tea.\x00"})
    assert info.value.status_code == 422 and "NUL" in info.value.message
    run = SkillRun.objects.get()
    assert run.status == "failed" and run.input == {"text": "I prefer tea."}


def test_huge_input_is_stored_truncated_with_the_full_digest(settings):
    settings.LLM_BASE_URL = ""
    settings.SKILL_RUN_INPUT_MAX_CHARS = 1000
    data = {"text": "Acme renewed the contract for $1.2M. " * 200, "max_tokens": 30}
    skill_run(name="summarize", input=data)
    run = SkillRun.objects.get()
    assert run.input_truncated and run.input["_truncated"] and len(run.input["preview"]) == 1000
    assert run.input_digest == input_digest(data)


def test_prompt_only_skill_with_a_broken_schema_fails_cleanly(settings):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"  # never reached
    Skill.objects.create(name="broken", prompt="x", output_schema={"type": "nonsense"})
    with pytest.raises(SkillFailed) as info:
        skill_run(name="broken", input={})
    run = SkillRun.objects.get(id=info.value.run_id)
    assert run.status == "failed" and "not a valid JSON schema" in run.error and run.attempts == 0


def test_all_builtins_are_synced():
    skill_sync_builtins()
    assert set(Skill.objects.filter(builtin=True).values_list("name", flat=True)) == {
        "compress",
        "contract_clauses",
        "fact_extract",
        "preference_extract",
        "summarize",
        "weekly_report",
    }


@pytest.mark.parametrize(
    ("replies", "used_llm", "status"),
    [
        ([json.dumps({"summary": "Alice prefers tea."})], True, "success"),
        ([{"status": 500, "body": "down"}] * 3, False, "fallback"),  # the offline path stood in
        ([], None, "success"),  # no LLM configured
    ],
)
def test_the_output_says_which_path_made_it(settings, chat_server, replies, used_llm, status):
    chat_server.script = list(replies)
    if used_llm is None:
        used_llm = False
        settings.LLM_BASE_URL = ""
    out = skill_run(
        name="compress", input={"items": ["Alice prefers tea.", "Alice likes tea."], "max_tokens": 20}
    )
    run = SkillRun.objects.get()
    assert out.used_llm is used_llm is run.used_llm and run.status == status
    assert out == run.output and out["summary"]
