"""The governance console: non-superusers see only what visible_to allows; actions; edits via services."""

import json

import pytest
from django.contrib.auth.models import Permission

from memories.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_bob(bob):
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    bob.user_permissions.add(*Permission.objects.filter(codename__in=["view_memory", "change_memory"]))
    return bob


@pytest.fixture
def superadmin(tenant):
    from almanac.services.users import user_create

    return user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")


def test_non_superuser_sees_only_visible(client, alice, staff_bob, remember):
    private = remember(alice, "alice private: window seat")
    shared = remember(alice, "Apollo launch plan is ready", scope="project", scope_key="Apollo")
    client.force_login(staff_bob)
    page = client.get("/admin/memories/memory/")
    assert page.status_code == 200
    ids = {m.pk for m in page.context["cl"].queryset}
    assert ids == {shared.pk}
    assert client.get(f"/admin/memories/memory/{private.pk}/change/").status_code in (302, 404)


def test_superuser_sees_all_and_exports(client, alice, superadmin, remember):
    memories = [remember(alice, "我喜欢喝美式咖啡"), remember(alice, "Bob prefers mornings", scope="tenant")]
    client.force_login(superadmin)
    assert len(client.get("/admin/memories/memory/").context["cl"].queryset) == 2
    ids = [str(m.pk) for m in memories]
    response = client.post("/admin/memories/memory/", {"action": "export_json", "_selected_action": ids})
    rows = json.loads(response.content)
    assert {r["content"] for r in rows} == {"我喜欢喝美式咖啡", "Bob prefers mornings"}
    response = client.post("/admin/memories/memory/", {"action": "export_csv", "_selected_action": ids})
    assert response["Content-Type"].startswith("text/csv") and "美式咖啡" in response.content.decode()


def test_archive_and_reactivate_record_history(client, alice, superadmin, remember):
    memory = remember(alice, "an archivable fact about fax machines")
    client.force_login(superadmin)
    client.post("/admin/memories/memory/", {"action": "archive", "_selected_action": [memory.pk]})
    memory.refresh_from_db()
    assert memory.status == "archived"
    latest = memory.history.first()
    assert (latest.history_change_reason, latest.history_user) == ("admin:archive", superadmin)
    client.post("/admin/memories/memory/", {"action": "reactivate", "_selected_action": [memory.pk]})
    memory.refresh_from_db()
    assert memory.status == "active"


def test_admin_edit_reembeds(client, alice, superadmin, remember):
    from memories import selectors

    memory = remember(alice, "The Apollo launch is in March")
    client.force_login(superadmin)
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = {"owner": alice.pk, "memory_type": "semantic", "content": "Zephyr 的发布改到 6 月", "scope": "user",
            "scope_key": "alice", "importance": "0.5", "status": "active", "meta": "{}", "occurred_at": ""}  # fmt: skip
    response = client.post(url, form)
    assert response.status_code == 302, response.content[:2000]
    memory.refresh_from_db()
    assert memory.content == "Zephyr 的发布改到 6 月"
    assert selectors.memory_search(user=alice, query="Zephyr 发布", top_k=1)[0].memory.pk == memory.pk
    assert memory.history.first().history_change_reason == "admin"
    assert Memory.objects.count() == 1


def test_history_revert_restores_content_and_index(client, alice, superadmin, remember):
    from memories import selectors
    from memories.services.memories import memory_update

    memory = remember(alice, "Our Apollo kickoff is in Lisbon")
    memory_update(memory=memory, user=alice, data={"content": "我们的 Zephyr 启动会在杭州"})
    old = memory.history.order_by("history_date").first()
    client.force_login(superadmin)
    url = f"/admin/memories/memory/{memory.pk}/history/{old.history_id}/"
    form = {"owner": alice.pk, "memory_type": "semantic", "content": old.content, "scope": "user",
            "scope_key": "alice", "importance": "0.5", "status": "active", "meta": "{}", "occurred_at": ""}  # fmt: skip
    response = client.post(url, form)
    assert response.status_code == 302, response.content[:2000]
    memory.refresh_from_db()
    assert memory.content == "Our Apollo kickoff is in Lisbon"
    assert (
        selectors.memory_search(user=alice, query="Apollo kickoff Lisbon", top_k=1)[0].breakdown[
            "keyword_rank"
        ]
        == 1
    )
    assert not selectors.memory_list(user=alice, q="杭州").exists()


def _form(owner, **changes):
    form = {"owner": owner.pk, "memory_type": "semantic", "content": "Apollo ships in May", "scope": "user",
            "scope_key": "", "importance": "0.5", "status": "active", "meta": "{}", "occurred_at": ""}  # fmt: skip
    return {**form, **changes}


def test_a_change_the_services_refuse_is_a_form_error_and_changes_nothing(
    client, alice, bob, superadmin, remember
):
    memory = remember(alice, "The Apollo launch is in March")
    client.force_login(superadmin)
    url = f"/admin/memories/memory/{memory.pk}/change/"
    changes = {"content": "The Apollo launch is in June", "scope": "dept", "scope_key": "Finance"}  # bob's
    response = client.post(url, _form(alice, **changes))
    body = response.content.decode()
    assert (
        response.status_code == 200 and "not a member of dept" in body and "changed successfully" not in body
    )
    assert "The Apollo launch is in June" in body  # the input is kept
    memory.refresh_from_db()
    assert memory.content == "The Apollo launch is in March" and memory.scope == "user"


def test_an_admin_adds_a_memory_in_the_owner_s_scope_as_itself(client, alice, superadmin):
    from almanac.models import AuditEvent

    client.force_login(superadmin)
    response = client.post("/admin/memories/memory/add/", _form(alice))  # no scope_key: the owner's own
    assert response.status_code == 302, response.content[:2000]
    memory = Memory.objects.get(content="Apollo ships in May")
    assert memory.scope_key == "alice"
    assert memory.history.first().history_user == superadmin
    assert AuditEvent.objects.get(action="memory.create", object_id=str(memory.pk)).actor == "root"
    refused = client.post(
        "/admin/memories/memory/add/",
        _form(alice, content="Apollo ships later", scope="project", scope_key="nope"),
    )
    assert refused.status_code == 200 and "unknown project" in refused.content.decode()
    assert not Memory.objects.filter(content="Apollo ships later").exists()
    not_object = client.post(
        "/admin/memories/memory/add/", _form(alice, content="Apollo ships later", meta="[1, 2]")
    )
    assert not_object.status_code == 200 and "meta must be a JSON object" in not_object.content.decode()
