"""Deleted memories in the admin (memories.admin_deleted): listed while restorable, restored
by an admin within MEMORY_RESTORE_DAYS, and no "Revert" on a gone memory's history."""

from datetime import timedelta

import pytest

from almanac.models import AuditEvent
from memories.models import Memory
from memories.services.memories import memory_delete
from memories.services.purge import memory_purge

pytestmark = pytest.mark.django_db


@pytest.fixture
def root_client(client, tenant):
    from almanac.services.users import user_create

    client.force_login(user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678"))
    return client


def test_an_admin_restores_a_memory_deleted_by_mistake(root_client, alice, remember):
    memory = remember(alice, "The Vercel renewal is due on 2027-03-01", scope="dept", scope_key="Sales")
    memory_id = memory.pk
    memory_delete(memory=memory, user=alice)
    listed = root_client.get("/admin/memories/memory/deleted/").content.decode()
    assert "The Vercel renewal is due on 2027-03-01" in listed
    history = root_client.get(f"/admin/memories/memory/{memory_id}/history/").content.decode()
    assert f"/admin/memories/memory/deleted/{memory_id}/restore/" in history
    response = root_client.post(f"/admin/memories/memory/deleted/{memory_id}/restore/")
    assert response.status_code == 302 and response["Location"].endswith(
        f"/memories/memory/{memory_id}/change/"
    )
    row = Memory.objects.get(pk=memory_id)
    assert (row.content, row.scope_key, row.status) == (memory.content, "sales", "active")
    event = AuditEvent.objects.get(action="memory.restore", object_id=str(memory_id))
    assert event.actor == "root" and event.detail["reason"] == "admin:restore"
    assert "2027-03-01" not in root_client.get("/admin/memories/memory/deleted/").content.decode()


def test_past_the_retention_window_it_is_neither_listed_nor_restored(root_client, alice, remember, settings):
    settings.MEMORY_RESTORE_DAYS = 30
    memory = remember(alice, "Apollo launch moved to June")
    memory_id = memory.pk
    memory_delete(memory=memory, user=alice)
    row = Memory.history.filter(id=memory_id, history_type="-").latest("history_id")
    Memory.history.filter(history_id=row.history_id).update(
        history_date=row.history_date - timedelta(days=31)
    )
    assert "Apollo launch" not in root_client.get("/admin/memories/memory/deleted/").content.decode()
    response = root_client.post(f"/admin/memories/memory/deleted/{memory_id}/restore/", follow=True)
    assert "too long ago" in response.content.decode() and not Memory.objects.filter(pk=memory_id).exists()


def test_a_purged_memory_history_offers_no_revert_nor_restore(root_client, alice, remember):
    memory = remember(alice, "My passport number is X1234567")
    memory_id = memory.pk
    memory_purge(memory=memory, user=alice)
    history = root_client.get(f"/admin/memories/memory/{memory_id}/history/")
    page = history.content.decode()
    assert history.status_code == 200 and history.context["revert_disabled"] is True
    assert f"/history/{memory_id}/" not in page and "/restore/" not in page  # no version link to revert
    assert "cannot be reverted" in page


def test_a_living_memory_history_still_offers_revert(root_client, alice, remember):
    memory = remember(alice, "Standup is at 9:30")
    history = root_client.get(f"/admin/memories/memory/{memory.pk}/history/")
    assert history.context["revert_disabled"] is False


def test_staff_see_only_deleted_memories_they_could_read(client, alice, bob, remember):
    from django.contrib.auth.models import Permission

    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    bob.user_permissions.add(*Permission.objects.filter(codename__in=["view_memory", "delete_memory"]))
    private = remember(alice, "alice private: window seat")
    shared = remember(alice, "Apollo launch plan is ready", scope="project", scope_key="Apollo")
    for memory in (private, shared):
        memory_delete(memory=memory, user=alice)
    client.force_login(bob)
    page = client.get("/admin/memories/memory/deleted/").content.decode()
    assert "Apollo launch plan" in page and "window seat" not in page


def test_the_memory_list_links_to_the_deleted_memories(root_client):
    page = root_client.get("/admin/memories/memory/").content.decode()
    assert 'href="/admin/memories/memory/deleted/"' in page
