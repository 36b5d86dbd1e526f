import json

import pytest
from django.urls import reverse

from memories.models import Memory
from skills import registry
from skills.models import Skill, SkillRun
from skills.selectors import skill_run_stats
from skills.services import skill_run, skill_sync_builtins

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(settings):
    settings.LLM_BASE_URL = ""
    skill_run(name="summarize", input={"text": "Acme renewed for $1.2M.", "max_tokens": 20}, trigger="test")
    skill_run(name="fact_extract", input={"text": "我喜欢喝绿茶。"}, trigger="event:session.ended")
    return SkillRun.objects.all()


def test_skill_changelist_lists_builtins(admin_client):
    skill_sync_builtins()
    response = admin_client.get(reverse("admin:skills_skill_changelist"))
    assert response.status_code == 200
    assert b"fact_extract" in response.content and b"summarize" in response.content


def test_builtin_skill_contract_is_read_only(admin_client):
    skill = skill_sync_builtins()[0]
    url = reverse("admin:skills_skill_change", args=[skill.pk])
    response = admin_client.post(url, {"enabled": ""})
    assert response.status_code == 302
    skill.refresh_from_db()
    assert not skill.enabled
    assert skill.input_schema == registry.get_builtin(skill.name).input_schema  # untouched


def test_admin_adds_prompt_only_skill_with_valid_schemas(admin_client):
    url = reverse("admin:skills_skill_add")
    base = {
        "name": "team_digest",
        "version": "1",
        "description": "",
        "prompt": "Write a report for {team}.",
        "input_schema": '{"type": "object"}',
        "events": '["document.uploaded"]',
        "enabled": "on",
    }
    bad = admin_client.post(url, {**base, "output_schema": '{"type": "nonsense"}'})
    assert bad.status_code == 200 and b"not a valid JSON schema" in bad.content
    good = admin_client.post(url, {**base, "output_schema": '{"type": "object"}'})
    assert good.status_code == 302
    skill = Skill.objects.get(name="team_digest")
    assert not skill.builtin and skill.events == ["document.uploaded"] and skill.history.count() == 1


def test_skillrun_changelist_filters_and_search(admin_client, runs):
    url = reverse("admin:skills_skillrun_changelist")
    assert admin_client.get(url).status_code == 200
    filtered = admin_client.get(url, {"skill_name": "summarize", "status__exact": "success"})
    assert filtered.status_code == 200 and filtered.context["cl"].result_count == 1
    searched = admin_client.get(url, {"q": "session.ended"})
    assert searched.context["cl"].result_count == 1
    by_kind = admin_client.get(url, {"trigger_kind": "event"})
    assert by_kind.context["cl"].result_count == 1 and b"event" in by_kind.content


def test_skillrun_is_read_only(admin_client, runs):
    run = runs.first()
    url = reverse("admin:skills_skillrun_change", args=[run.pk])
    page = admin_client.get(url)
    assert page.status_code == 200 and run.input_digest.encode() in page.content
    assert admin_client.post(url, {"status": "failed"}).status_code == 403
    assert admin_client.get(reverse("admin:skills_skillrun_add")).status_code == 403


NOTES_SCHEMA = {
    "type": "object",
    "properties": {"notes": {"type": "array", "items": {"type": "string"}}},
    "required": ["notes"],
}


def prompt_form(**changes) -> dict:
    form = {
        "name": "team_notes",
        "version": "1",
        "description": "",
        "prompt": "Note what matters in {text}.",
        "input_schema": '{"type": "object"}',
        "output_schema": json.dumps(NOTES_SCHEMA),
        "events": '["memory.created"]',
        "enabled": "on",
        "output_to": "memory",
        "output_field": "notes",
        "output_scope": "dept:sales",
        "output_kind": "summary",
        "output_memory_type": "semantic",
        "output_page": "",
    }
    return {**form, **changes}


def test_admin_validates_where_the_output_goes(admin_client):
    url = reverse("admin:skills_skill_add")
    no_field = admin_client.post(url, prompt_form(output_field="summary"))
    assert no_field.status_code == 200 and "output_field" in no_field.context["adminform"].form.errors
    bad_scope = admin_client.post(url, prompt_form(output_scope="dept"))
    assert bad_scope.status_code == 200 and "output_scope" in bad_scope.context["adminform"].form.errors
    no_page = admin_client.post(url, prompt_form(output_to="section"))
    assert no_page.status_code == 200 and "output_page" in no_page.context["adminform"].form.errors
    assert admin_client.post(url, prompt_form()).status_code == 302
    skill = Skill.objects.get(name="team_notes")
    assert (skill.output_to, skill.output_scope, skill.output_kind) == ("memory", "dept:sales", "summary")
    assert admin_client.post(url, prompt_form(name="page_notes", output_to="section", output_page="Notes"))
    assert Skill.objects.get(name="page_notes").output_page == "Notes"


def test_output_fields_are_labelled_in_chinese(admin_client):
    admin_client.cookies["django_language"] = "zh-hans"
    page = admin_client.get(reverse("admin:skills_skill_add"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "输出去向" in page.content.decode()


def test_test_run_shows_output_and_validation_and_stores_nothing(admin_client, alice, chat_server):
    skill = Skill.objects.create(**{k: v for k, v in prompt_form(output_scope="user").items() if k in (
        "name", "prompt", "output_to", "output_field", "output_scope", "output_kind"
    )}, output_schema=NOTES_SCHEMA, events=["memory.created"])  # fmt: skip
    url = reverse("admin:skills_skill_test_run", args=[skill.pk])
    assert admin_client.get(url).status_code == 200
    chat_server.script = ['{"notes": ["Acme renews in March."]}']
    sample = {"text": "Acme said they renew in March.", "user_id": alice.pk, "scope": "user"}
    page = admin_client.post(url, {"input": json.dumps(sample)})
    body = page.content.decode()
    assert page.status_code == 200 and page.context["result"]["valid"]
    assert "Acme renews in March." in body and "matches the output schema" in body
    assert "Note what matters in the input field" in body  # the prompt sent
    assert page.context["result"]["kept"] == ["Acme renews in March."]
    assert not SkillRun.objects.exists() and not Memory.objects.exists()

    chat_server.script = ['{"notes": "one"}'] * 3
    invalid = admin_client.post(url, {"input": json.dumps(sample)})
    assert not invalid.context["result"]["valid"] and "does not match the schema" in invalid.content.decode()
    assert admin_client.post(url, {"input": "[1, 2]"}).context["result"] is None  # not an object
    assert not SkillRun.objects.exists() and not Memory.objects.exists()


def test_test_run_is_for_prompt_skills_only(admin_client):
    builtin = skill_sync_builtins()[0]
    assert admin_client.get(reverse("admin:skills_skill_test_run", args=[builtin.pk])).status_code == 404


def test_skill_page_counts_runs_by_trigger(admin_client, settings):
    settings.LLM_BASE_URL = ""
    skill = Skill.objects.create(name="team_notes", prompt="x", output_schema=NOTES_SCHEMA)
    SkillRun.objects.bulk_create(
        [
            SkillRun(skill_name="team_notes", trigger="api", status="success", input_digest="a"),
            SkillRun(skill_name="team_notes", trigger="api", status="success", input_digest="b"),
            SkillRun(
                skill_name="team_notes", trigger="event:memory.created", status="success", input_digest="c"
            ),
            SkillRun(
                skill_name="team_notes",
                trigger="event:memory.created",
                status="failed",
                input_digest="d",
                error="LLM: timeout",
            ),
            SkillRun(skill_name="other", trigger="api", status="failed", input_digest="e", error="other"),
        ]
    )
    stats = skill_run_stats("team_notes")
    assert stats["total"] == 4 and stats["failed"] == 1 and stats["failure_rate"] == 0.25
    assert [(r["trigger"], r["runs"], r["failed"]) for r in stats["by_trigger"]] == [
        ("api", 2, 0),
        ("event:memory.created", 2, 1),
    ]
    assert stats["last_error"]["error"] == "LLM: timeout"
    page = admin_client.get(reverse("admin:skills_skill_change", args=[skill.pk])).content.decode()
    assert "25%" in page and "LLM: timeout" in page and "event:memory.created" in page
    runs = reverse("admin:skills_skillrun_changelist")
    by_event = admin_client.get(runs, {"skill_name": "team_notes", "event": "memory.created"})
    assert by_event.context["cl"].result_count == 2
    by_trigger = admin_client.get(runs, {"skill_name": "team_notes", "trigger_kind": "api"})
    assert by_trigger.context["cl"].result_count == 2
