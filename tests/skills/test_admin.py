import pytest
from django.urls import reverse

from skills import registry
from skills.models import Skill, SkillRun
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
