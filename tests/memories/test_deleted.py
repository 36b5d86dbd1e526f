"""Deleted memories brought back (memories.services.deleted): the owner's undo within
MEMORY_UNDO_SECONDS, a governor's restore within MEMORY_RESTORE_DAYS, never after a purge."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.http import Http404

from almanac.errors import ApplicationError
from almanac.models import AuditEvent
from memories.models import Memory
from memories.selectors import memory_list, memory_search
from memories.services.deleted import memory_restore_deleted
from memories.services.memories import memory_delete
from memories.services.purge import memory_purge

pytestmark = pytest.mark.django_db


def _age_delete(memory_id: int, **ago) -> None:
    """Date the memory's delete (its last history row) back by `ago`."""
    row = Memory.history.filter(id=memory_id, history_type="-").latest("history_id")
    Memory.history.filter(history_id=row.history_id).update(history_date=row.history_date - timedelta(**ago))


def test_the_owner_undoes_a_delete_and_gets_the_memory_back_as_it_was(alice, remember):
    memory = remember(alice, "Vercel renewal is due on 2027-03-01", scope="dept", scope_key="Sales")
    memory_id = memory.pk
    created = Memory.objects.get(pk=memory_id).created_at
    memory_delete(memory=memory, user=alice, reason="web")
    assert not memory_list(user=alice).exists()
    restored = memory_restore_deleted(user=alice, memory_id=memory_id)
    row = Memory.objects.get(pk=memory_id)
    assert (row.content, row.scope, row.scope_key, row.status) == (memory.content, "dept", "sales", "active")
    assert row.created_at == created and restored.pk == memory_id
    # Found again by keyword and by meaning (its index columns were computed again).
    assert list(memory_list(user=alice, q="renewal")) == [row]
    assert [hit.memory.pk for hit in memory_search(user=alice, query="When is the Vercel renewal due?")] == [
        memory_id
    ]
    assert AuditEvent.objects.filter(action="memory.restore", object_id=str(memory_id)).exists()
    assert list(Memory.history.filter(id=memory_id).values_list("history_type", flat=True)) == ["+", "-", "+"]


def test_the_undo_window_closes_for_the_owner_but_not_for_a_governor(alice, bob, remember, settings):
    settings.MEMORY_UNDO_SECONDS, settings.MEMORY_RESTORE_DAYS = 60, 30
    memory = remember(alice, "Apollo launch moved to June", scope="project", scope_key="Apollo")
    memory_id = memory.pk
    memory_delete(memory=memory, user=alice)
    _age_delete(memory_id, seconds=61)
    with pytest.raises(ApplicationError) as late:
        memory_restore_deleted(user=alice, memory_id=memory_id)
    assert late.value.status_code == 410
    with pytest.raises(ApplicationError) as refused:  # bob saw it, but may not restore it
        memory_restore_deleted(user=bob, memory_id=memory_id)
    assert refused.value.status_code == 403
    bob.user_permissions.add(Permission.objects.get(codename="delete_memory"))
    bob = type(bob).objects.get(pk=bob.pk)  # permissions are cached per instance
    memory_restore_deleted(user=bob, memory_id=memory_id, reason="admin:restore")
    assert Memory.objects.filter(pk=memory_id, status="active").exists()
    memory_delete(memory=Memory.objects.get(pk=memory_id), user=bob)
    _age_delete(memory_id, days=31)
    with pytest.raises(ApplicationError) as too_late:
        memory_restore_deleted(user=bob, memory_id=memory_id)
    assert too_late.value.status_code == 410


def test_a_purged_memory_cannot_come_back(alice, remember):
    memory = remember(alice, "My passport number is X1234567")
    memory_id = memory.pk
    memory_purge(memory=memory, user=alice)
    with pytest.raises(ApplicationError) as gone:
        memory_restore_deleted(user=alice, memory_id=memory_id)
    assert gone.value.status_code == 410
    assert not Memory.objects.filter(pk=memory_id).exists()


def test_another_tenants_or_a_living_memory_is_not_found(alice, mallory, remember):
    memory = remember(alice, "Kickoff agenda is in the shared drive")
    memory_id = memory.pk
    with pytest.raises(Http404):  # not deleted
        memory_restore_deleted(user=alice, memory_id=memory_id)
    memory_delete(memory=memory, user=alice)
    with pytest.raises(Http404):
        memory_restore_deleted(user=mallory, memory_id=memory_id)


def test_an_undone_delete_supersedes_again_what_it_had_superseded(alice, remember):
    older = remember(alice, "The Vercel discount ceiling is 15%", scope="dept", scope_key="Sales")
    newer = remember(alice, "The Vercel discount ceiling is 18%", scope="dept", scope_key="Sales")
    newer_id = newer.pk
    assert Memory.objects.get(pk=older.pk).status == "superseded"
    memory_delete(memory=newer, user=alice)
    assert Memory.objects.get(pk=older.pk).status == "active"
    memory_restore_deleted(user=alice, memory_id=newer_id)
    back = Memory.objects.get(pk=older.pk)
    assert (back.status, back.superseded_by_id) == ("superseded", newer_id)
