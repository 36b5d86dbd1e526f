import pytest

from skills import bus, registry
from skills.models import Skill, SkillRun
from skills.services import skill_sync_builtins
from skills.tasks import skill_event_task

pytestmark = pytest.mark.django_db

SUMMARY_INPUT = {"text": "Acme renewed the contract for $1.2M on 2025-03-12.", "max_tokens": 50}


@pytest.fixture
def subscribed():
    seen = []
    registry.subscribe(
        "fact.confirmed",
        "summarize",
        to_input=lambda payload: (
            {"text": payload["content"], "max_tokens": 50} if payload.get("content") else None
        ),
        on_output=lambda payload, output: seen.append((payload["id"], output["summary"])),
    )
    yield seen
    registry.unsubscribe("fact.confirmed", "summarize")


def test_publish_runs_subscribed_skill_after_commit(
    settings, subscribed, tenant, django_capture_on_commit_callbacks
):
    settings.LLM_BASE_URL = ""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        keys = bus.publish(
            "fact.confirmed", {"id": 7, "content": "Acme renewed for $1.2M."}, tenant_id=tenant.id
        )
    assert len(keys) == 1 and not SkillRun.objects.exists()  # nothing before the commit
    for callback in callbacks:
        callback()
    run = SkillRun.objects.get()
    assert (run.skill_name, run.trigger, run.event_key, run.tenant) == (
        "summarize",
        "event:fact.confirmed",
        keys[0],
        tenant,
    )
    assert subscribed == [(7, "Acme renewed for $1.2M.")]


def test_event_without_subscribers_enqueues_nothing(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert bus.publish("fact.confirmed", {"id": 1}) == []
    assert callbacks == [] and not SkillRun.objects.exists()


def test_event_task_is_idempotent_per_delivery(settings, subscribed):
    settings.LLM_BASE_URL = ""
    payload = {"id": 3, "content": "Carol owns PRD-2024-013."}
    skill_event_task("summarize", "fact.confirmed", payload, None, "key-1")
    skill_event_task("summarize", "fact.confirmed", payload, None, "key-1")  # a retried delivery
    assert SkillRun.objects.count() == 1
    assert subscribed == [(3, "Carol owns PRD-2024-013.")] * 2  # on_output must itself be idempotent


def test_to_input_can_skip_a_payload(settings, subscribed):
    settings.LLM_BASE_URL = ""
    skill_event_task("summarize", "fact.confirmed", {"id": 4}, None, "key-2")
    assert not SkillRun.objects.exists() and subscribed == []


def test_admin_defined_skill_subscribes_by_events(settings, django_capture_on_commit_callbacks):
    settings.LLM_BASE_URL = ""
    Skill.objects.create(name="clause_lister", prompt="List clauses", events=["fact.confirmed"])
    Skill.objects.create(name="off", prompt="x", events=["fact.confirmed"], enabled=False)
    assert bus.subscribers("fact.confirmed") == ["clause_lister"]
    with django_capture_on_commit_callbacks(execute=True):
        bus.publish("fact.confirmed", {"text": "Clause 1"})
    run = SkillRun.objects.get()  # no LLM configured: a prompt-only skill fails, recorded
    assert (run.skill_name, run.status, run.trigger) == (
        "clause_lister",
        "failed",
        "event:fact.confirmed",
    )


def test_disabled_builtin_is_not_a_subscriber(subscribed):
    skill_sync_builtins()
    assert bus.subscribers("fact.confirmed") == ["summarize"]
    Skill.objects.filter(name="summarize").update(enabled=False)
    assert bus.subscribers("fact.confirmed") == []


def test_bad_event_input_is_recorded_not_raised(settings):
    settings.LLM_BASE_URL = ""
    skill_event_task("summarize", "fact.confirmed", {"text": "x"}, None, "key-3")  # max_tokens missing
    run = SkillRun.objects.get()
    assert run.status == "failed" and "max_tokens" in run.error
