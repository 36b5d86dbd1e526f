"""The Skills API (skills.api, skills.acting): list what a key may run, run it, validation,
404 for what it may not run, the run recorded with its trigger."""

import pytest

from almanac.services.keys import agentkey_create
from skills.models import Skill, SkillRun

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _offline(settings):
    settings.LLM_BASE_URL = ""


def test_list_names_each_enabled_skill_with_its_contract(api, alice):
    Skill.objects.create(name="tone", prompt="Rate the tone of {text}.", events=["memory.created"])
    Skill.objects.create(name="off", prompt="x", enabled=False)
    response = api.get("/skills", user="alice")
    assert response.status_code == 200
    skills = {s["name"]: s for s in response.json()["skills"]}
    assert {"summarize", "fact_extract", "preference_extract", "weekly_report", "tone"} <= set(skills)
    assert "off" not in skills
    summarize = skills["summarize"]
    assert summarize["input_schema"]["required"] == ["text", "max_tokens"] and "summary" in str(
        summarize["output_schema"]
    )
    assert summarize["triggers"] == ["api"]
    assert skills["tone"]["triggers"] == ["api", "event:memory.created"]
    assert skills["preference_extract"]["triggers"] == ["api", "event:session.ended"]
    assert skills["weekly_report"]["triggers"] == ["api", "schedule"]
    # What a reading skill reads for the user is not the caller's to give.
    assert set(skills["weekly_report"]["input_schema"]["properties"]) == {"days", "until", "lang"}


def test_run_returns_output_and_records_the_run(api, alice):
    response = api.post(
        "/skills/summarize/run",
        {
            "user": "alice",
            "input": {"text": "Acme signed the renewal at $120k. The kickoff is Monday.", "max_tokens": 50},
        },
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["output"]["summary"] and body["used_llm"] is False
    run = SkillRun.objects.get(pk=body["run_id"])
    assert (run.skill_name, run.trigger, run.status) == ("summarize", "api", "success")
    assert run.output == body["output"]


@pytest.mark.parametrize(
    ("input", "field"),
    [
        ({"max_tokens": 50}, "text"),  # required
        ({"text": "x", "max_tokens": 0}, "max_tokens"),  # out of range
        ({"text": 5, "max_tokens": 50}, "text"),  # wrong type
        ({"text": "x", "max_tokens": 50, "colour": "red"}, "colour"),  # not in the schema
    ],
)
def test_invalid_input_is_422_naming_the_field(api, alice, input, field):
    response = api.post("/skills/summarize/run", {"user": "alice", "input": input})
    assert response.status_code == 422
    assert response.json()["field"] == field and field in response.json()["detail"]
    assert not SkillRun.objects.exists()


def test_a_reading_skill_takes_no_rows_from_the_caller(api, alice):
    planted = [{"id": 1, "text": "Planted by the caller", "type": "episodic"}]
    response = api.post("/skills/weekly_report/run", {"user": "alice", "input": {"memories": planted}})
    assert response.status_code == 422 and response.json()["field"] == "memories"


@pytest.mark.parametrize("name", ["no_such_skill", "off"])
def test_a_skill_the_key_may_not_run_is_404(api, alice, name):
    Skill.objects.create(name="off", prompt="x", enabled=False)
    response = api.post(f"/skills/{name}/run", {"user": "alice", "input": {"text": "x"}})
    assert response.status_code == 404 and name in response.json()["detail"]
    assert not SkillRun.objects.exists()


def test_a_disabled_builtin_is_404(api, alice):
    from skills.services import skill_sync_builtins

    skill_sync_builtins()
    Skill.objects.filter(name="summarize").update(enabled=False)
    assert api.post("/skills/summarize/run", {"user": "alice", "input": {"text": "x"}}).status_code == 404
    assert "summarize" not in {s["name"] for s in api.get("/skills", user="alice").json()["skills"]}


def test_a_prompt_skill_without_an_llm_is_503_with_its_run(api, alice):
    Skill.objects.create(name="tone", prompt="Rate {text}.", input_schema={"type": "object"})
    response = api.post("/skills/tone/run", {"user": "alice", "input": {"text": "hello"}})
    assert response.status_code == 503
    run = SkillRun.objects.get(pk=response.json()["run_id"])
    assert (run.status, run.trigger) == ("failed", "api")


def test_who_may_call(client, api, alice, mallory, tenant):
    # A user of another tenant is not found; a key that may not act for users is refused.
    assert api.get("/skills", user="mallory").status_code == 404
    assert api.get("/skills").status_code == 422
    _, secret = agentkey_create(tenant=tenant, name="events-only", can_act_for_users=False)
    headers = {"Authorization": f"Bearer {secret}"}
    assert client.get("/api/v1/skills", {"user": "alice"}, headers=headers).status_code == 403
    assert client.get("/api/v1/skills").status_code == 401
    # Logged in: for oneself.
    client.force_login(alice)
    assert client.get("/api/v1/skills").status_code == 200
    response = client.post(
        "/api/v1/skills/summarize/run",
        {"input": {"text": "Hello there.", "max_tokens": 20}},
        content_type="application/json",
    )
    assert response.status_code == 200


def test_the_command_and_the_bus_record_their_triggers(alice, django_capture_on_commit_callbacks):
    from django.core.management import call_command

    from skills.signals import domain_event

    call_command("skill_run", "summarize", '{"text": "Hello there, Acme signed.", "max_tokens": 20}')
    Skill.objects.create(name="echo", prompt="x", events=["memory.created"])
    with django_capture_on_commit_callbacks(execute=True):
        domain_event.send(sender=None, event="memory.created", payload={"memory_id": 1}, tenant_id=None)
    triggers = dict(SkillRun.objects.values_list("skill_name", "trigger"))
    assert triggers == {"summarize": "admin", "echo": "event:memory.created"}
