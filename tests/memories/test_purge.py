"""Purging a sensitive memory (DESIGN §8): gone, and gone from its history and the skill-run
log; an audit event without the content says it happened. A plain delete keeps history."""

import json

import pytest

from almanac.models import AuditEvent
from memories import services
from memories.models import Memory
from skills.models import SkillRun
from skills.services import skill_run

pytestmark = pytest.mark.django_db

SECRET = "My passport number is X1234567, renew it in May"


@pytest.fixture
def secret(alice, remember, settings):
    settings.LLM_BASE_URL = ""
    memory = remember(alice, SECRET)
    services.memory_update(memory=memory, user=alice, data={"importance": 0.9})  # a second history row
    skill_run(
        name="fact_extract",
        input={"text": f"User: {SECRET}"},
        trigger="session:1",
        tenant=alice.profile.tenant,
    )
    return memory


def _history_texts(memory_id: int) -> list[str]:
    return list(Memory.history.filter(id=memory_id).values_list("content", flat=True))


def test_purge_removes_the_text_everywhere_and_audits_without_it(alice, secret):
    memory_id = secret.pk
    counts = services.memory_purge(memory=secret, user=alice)
    assert not Memory.objects.filter(pk=memory_id).exists()
    texts = _history_texts(memory_id)
    assert len(texts) == 3 and set(texts) == {"[purged]"}  # created, updated, deleted
    assert counts == {"history_rows": 3, "skill_runs": 1}
    assert not any("X1234567" in json.dumps([r.input, r.output, r.error]) for r in SkillRun.objects.all())
    event = AuditEvent.objects.get(action="memory.purge")
    assert event.object_id == str(memory_id) and event.actor == "alice"
    assert "X1234567" not in json.dumps(event.detail) and event.detail["history_rows"] == 3
    # Nor is it a term of the keyword statistics any more (no memory holds it).
    from almanac.models import TermStat

    assert not TermStat.objects.filter(term__icontains="x1234567").exists()


def test_delete_keeps_history_and_is_audited(alice, secret):
    memory_id = secret.pk
    services.memory_delete(memory=secret, user=alice)
    assert SECRET in _history_texts(memory_id)
    assert AuditEvent.objects.get(action="memory.delete").object_id == str(memory_id)


def test_only_the_owner_or_a_governor_may_purge(alice, bob, remember):
    shared = remember(alice, "Apollo vendor contract number is C-7781", scope="project", scope_key="Apollo")
    from almanac.errors import ApplicationError

    with pytest.raises(ApplicationError) as info:
        services.memory_purge(memory=shared, user=bob)  # bob sees it (Apollo) but does not own it
    assert info.value.status_code == 403
    assert Memory.objects.filter(pk=shared.pk).exists() and "C-7781" in _history_texts(shared.pk)[0]


def test_api_delete_with_purge(api, alice, charlie, secret):
    assert api.delete(f"/memories/{secret.pk}", user="charlie", purge="true").status_code == 404  # invisible
    assert api.delete(f"/memories/{secret.pk}", user="alice", purge="true").status_code == 204
    assert set(_history_texts(secret.pk)) == {"[purged]"}


def test_admin_purge_action(client, alice, secret, tenant):
    from almanac.services import user_create

    root = user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")
    client.force_login(root)
    asked = client.post("/admin/memories/memory/", {"action": "purge", "_selected_action": [secret.pk]})
    assert asked.status_code == 200 and "cannot be undone" in asked.content.decode()  # asked first
    assert Memory.objects.filter(pk=secret.pk).exists()
    response = client.post(
        "/admin/memories/memory/",
        {"action": "purge", "_selected_action": [secret.pk], "post": "yes"},
        follow=True,
    )
    assert response.status_code == 200 and "1 memories purged" in response.content.decode()
    assert set(_history_texts(secret.pk)) == {"[purged]"}
    assert AuditEvent.objects.get(action="memory.purge").actor == "root"
