"""Where a prompt skill's output goes (skills.prompt_skill.output_keep): an event runs an admin
prompt skill against a local chat-completions server; its validated output becomes memories of
its declared scope, or a page section its event's readers (and no one else) may read; an
invalid output, or one that cannot be kept, keeps nothing and the run says why."""

import json

import pytest

from memories.models import Memory
from memories.services.memories import memory_create
from skills import prompt_skill
from skills.models import Skill, SkillRun
from skills.services import SkillFailed, skill_run
from wiki.models import PageSection

pytestmark = pytest.mark.django_db

NOTES_SCHEMA = {
    "type": "object",
    "properties": {"notes": {"type": "array", "items": {"type": "string"}}},
    "required": ["notes"],
}


def digest_skill(**fields) -> Skill:
    return Skill.objects.create(
        name=fields.pop("name", "dept_digest"),
        prompt="Write what the team should remember of {text}.",
        events=["memory.created"],
        output_schema=fields.pop("output_schema", NOTES_SCHEMA),
        output_field="notes",
        **fields,
    )


def remember(user, content: str, capture, **scope) -> Memory:
    """`user` writes a memory; the skills subscribed to memory.created run after the commit."""
    with capture(execute=True):
        memory, _ = memory_create(owner=user, content=content, reason="api", **scope)
    return memory


def test_memory_created_keeps_the_output_in_the_declared_scope(
    alice, chat_server, django_capture_on_commit_callbacks
):
    digest_skill(output_to="memory", output_scope="dept:sales", output_kind="summary")
    chat_server.script = ['{"notes": ["Acme renews on 2026-03-01 for 120k."]}']
    note = remember(
        alice,
        "Acme told me the renewal is 2026-03-01, 120k a year.",
        django_capture_on_commit_callbacks,
        scope="dept",
    )
    kept = Memory.objects.exclude(pk=note.pk).get()
    assert (kept.scope, kept.scope_key, kept.kind, kept.owner) == ("dept", "sales", "summary", alice)
    assert kept.content == "Acme renews on 2026-03-01 for 120k." and kept.meta["skill"] == "dept_digest"
    run = SkillRun.objects.get(skill_name="dept_digest", status="success")
    assert run.trigger == "event:memory.created" and run.kept == {"memories": [kept.pk]}
    # The event's text reached the prompt as data.
    assert "Acme told me the renewal" in chat_server.user_messages(0)[0]
    # What the skill kept announced memory.created too: the skill does not run on it.
    echo = SkillRun.objects.get(skill_name="dept_digest", status="skipped")
    assert "what a prompt skill kept" in echo.error and len(chat_server.requests) == 1


def test_empty_scope_keeps_it_in_the_event_scope(alice, chat_server, django_capture_on_commit_callbacks):
    digest_skill(output_to="memory", output_kind="decision")
    chat_server.script = ['{"notes": ["Apollo ships on Friday.", "Apollo ships on Friday."]}']
    note = remember(
        alice, "We decided Apollo ships Friday.", django_capture_on_commit_callbacks, scope="project"
    )
    kept = Memory.objects.exclude(pk=note.pk).get()  # two equal notes: one memory
    assert (kept.scope, kept.scope_key, kept.kind) == ("project", note.scope_key, "decision")


def test_section_carries_the_event_readers_only(
    alice, bob, charlie, api, chat_server, django_capture_on_commit_callbacks
):
    section_schema = {
        "type": "object",
        "properties": {"page": {"type": "string"}, "notes": {"type": "array", "items": {"type": "string"}}},
        "required": ["page", "notes"],
    }
    digest_skill(name="project_notes", output_to="section", output_schema=section_schema)
    chat_server.script = [
        json.dumps({"page": "Apollo launch", "notes": ["Launch moved to May.", "QA owns it."]})
    ]
    note = remember(
        alice, "Apollo launch moved to May; QA owns it.", django_capture_on_commit_callbacks, scope="project"
    )
    section = PageSection.objects.get(thread_key__startswith="skill:project_notes:")
    assert section.acl == [f"project:{note.scope_key}"] and section.page.title == "Apollo launch"
    assert section.content == "- Launch moved to May.\n- QA owns it."
    slug = section.page.slug
    seen = api.get(f"/wiki/pages/{slug}", user="bob")  # bob is on Apollo
    assert seen.status_code == 200 and "Launch moved to May." in json.dumps(seen.json(), ensure_ascii=False)
    assert api.get(f"/wiki/pages/{slug}", user="charlie").status_code == 404  # outside the event's readers
    listed = api.get("/wiki/pages", user="charlie")
    assert listed.status_code == 200 and "Apollo launch" not in json.dumps(listed.json())
    assert SkillRun.objects.get(skill_name="project_notes", status="success").kept == {"section": section.pk}


def test_invalid_output_keeps_nothing_and_the_run_says_why(
    alice, chat_server, settings, django_capture_on_commit_callbacks
):
    settings.LLM_MAX_RETRIES = 1
    digest_skill(output_to="memory", output_scope="user")
    chat_server.script = ['{"notes": "not a list"}', '{"summary": "still wrong"}']
    note = remember(alice, "Lunch with Carol on Friday.", django_capture_on_commit_callbacks)
    run = SkillRun.objects.get(skill_name="dept_digest")
    assert (run.status, run.output, run.kept) == ("failed", None, None)
    assert "does not match the schema" in run.error and "notes" in run.error
    assert list(Memory.objects.values_list("pk", flat=True)) == [note.pk]


def test_output_that_cannot_be_kept_is_a_failed_run(alice, chat_server, django_capture_on_commit_callbacks):
    digest_skill(output_to="memory", output_scope="user")
    chat_server.script = ['{"notes": ["  "]}']  # valid, but nothing to keep
    note = remember(alice, "Nothing worth a note.", django_capture_on_commit_callbacks)
    run = SkillRun.objects.get(skill_name="dept_digest")
    assert run.status == "failed" and "output not kept" in run.error and run.output == {"notes": ["  "]}
    assert list(Memory.objects.values_list("pk", flat=True)) == [note.pk]


def test_scope_the_acting_user_is_not_in_keeps_nothing(alice, bob, chat_server):
    digest_skill(output_to="memory", output_scope="dept:finance")
    chat_server.script = ['{"notes": ["Budget is 2M."]}']
    payload = {
        "event_id": "x",
        "text": "Budget is 2M.",
        "user_id": alice.pk,
        "scope": "user",
        "scope_key": "alice",
    }
    with pytest.raises(SkillFailed):
        skill_run(
            name="dept_digest", input=payload, trigger="event:memory.created", tenant=alice.profile.tenant
        )
    run = SkillRun.objects.get()
    assert run.status == "failed" and "not a member" in run.error and not Memory.objects.exists()


def test_a_run_not_made_by_an_event_keeps_nothing(alice, chat_server):
    digest_skill(output_to="memory", output_scope="user")
    chat_server.script = ['{"notes": ["Kept only in the run log."]}']
    payload = {"text": "x", "user_id": alice.pk}
    assert skill_run(name="dept_digest", input=payload, trigger="api") == {
        "notes": ["Kept only in the run log."]
    }
    assert not Memory.objects.exists() and SkillRun.objects.get().kept is None


def test_memory_vocabulary_is_the_memories_app():
    assert set(prompt_skill.MEMORY_KINDS) == set(Memory.Kind.values)
    assert set(prompt_skill.MEMORY_SCOPES) == set(Memory.Scope.values)
    assert set(prompt_skill.MEMORY_TYPES) == set(Memory.Type.values)
