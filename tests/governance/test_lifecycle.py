"""Lifecycle controls (docs/operations.md, Memory lifecycle): per-tenant thresholds over the
environment's, a preview that is the commands' dry run and changes nothing, "Run now"."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from almanac.models import AuditEvent
from memories.models import LifecycleSettings, Memory
from memories.services.compression import compression_plan
from memories.services.decay import decay_candidates
from memories.services.memories import memory_create
from tests.memories.conftest import at_cosine, unit

pytestmark = pytest.mark.django_db


def _aged(owner, content, *, days: int, importance: float = 0.1) -> Memory:
    memory = memory_create(owner=owner, content=content, importance=importance)[0]
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=days))
    return memory


def _snapshot():
    return (
        sorted(Memory.objects.values_list("pk", "status", "updated_at")),
        AuditEvent.objects.count(),
        Memory.history.count(),
    )


def test_a_tenant_s_own_thresholds_override_the_environment(settings, tenant, alice, mallory):
    settings.MEMORY_DECAY_AFTER_DAYS = 180
    ours = _aged(alice, "Old note about the 2019 offsite", days=40)
    theirs = _aged(mallory, "Old note about the Globex picnic", days=40)
    assert not decay_candidates().filter(pk__in=[ours.pk, theirs.pk]).exists()
    LifecycleSettings.objects.create(tenant=tenant, decay_after_days=30)
    assert set(decay_candidates().filter(pk__in=[ours.pk, theirs.pk]).values_list("pk", flat=True)) == {
        ours.pk
    }
    settings.MEMORY_DECAY_AFTER_DAYS = 20  # the environment still decides for globex
    assert decay_candidates(tenant_id=mallory.profile.tenant_id).filter(pk=theirs.pk).exists()


def test_an_empty_field_takes_the_environment_s_value(settings, tenant, alice):
    LifecycleSettings.objects.create(tenant=tenant, decay_below_importance=0.9)
    settings.MEMORY_DECAY_AFTER_DAYS = 10
    memory = _aged(alice, "A fairly important but forgotten note", days=11, importance=0.5)
    assert decay_candidates(tenant_id=tenant.pk).filter(pk=memory.pk).exists()


def test_a_tenant_s_compress_min_decides_what_compression_takes(tenant, alice, mallory):
    topic = unit(7)
    for i in range(6):
        memory_create(owner=alice, content=f"Apollo checklist item {i} is owned by team {i % 3}",
                      embedding=at_cosine(topic, 0.9, seed=500 + i))  # fmt: skip
    assert compression_plan(tenant_id=tenant.pk) == []  # the environment's 20
    LifecycleSettings.objects.create(tenant=tenant, compress_min=4)
    plan = compression_plan(tenant_id=tenant.pk)
    assert plan and all(m.owner_id == alice.pk for group in plan for m in group.memories)


def test_the_preview_lists_what_the_command_s_dry_run_lists_and_changes_nothing(
    client, tenant, alice, superadmin
):
    settings_row = LifecycleSettings.objects.create(tenant=tenant, decay_after_days=30)
    old = _aged(alice, "Parking passes were renewed in 2021", days=60)
    fresh = _aged(alice, "Parking passes renew every spring", days=5)
    before = _snapshot()
    client.force_login(superadmin)
    response = client.get(f"/admin/memories/lifecyclesettings/{settings_row.pk}/preview/")
    assert response.status_code == 200
    listed = [m.pk for m in response.context["preview"].decay]
    out = StringIO()
    call_command("memories_decay", "--dry-run", "--tenant", tenant.slug, stdout=out)
    assert listed == [old.pk] and f"#{old.pk} " in out.getvalue() and f"#{fresh.pk} " not in out.getvalue()
    assert "Parking passes were renewed" in response.content.decode()
    call_command("memories_compress", "--dry-run", "--tenant", tenant.slug, stdout=StringIO())
    assert _snapshot() == before


def test_run_now_archives_the_candidates_and_is_audited(
    client, tenant, alice, superadmin, django_capture_on_commit_callbacks
):
    settings_row = LifecycleSettings.objects.create(tenant=tenant, decay_after_days=30)
    old = _aged(alice, "The 2020 holiday schedule", days=60)
    client.force_login(superadmin)
    url = f"/admin/memories/lifecyclesettings/{settings_row.pk}/run/"
    assert client.get(url).status_code == 405
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url).status_code == 302
    assert Memory.objects.get(pk=old.pk).status == "archived"
    assert AuditEvent.objects.filter(action="lifecycle.run", tenant=tenant, actor="root").exists()


def test_a_tenant_admin_edits_and_previews_only_their_tenant(client, tenant, other_tenant, tenant_admin):
    from tests.staff import make_staff

    theirs = LifecycleSettings.objects.create(tenant=other_tenant, decay_after_days=5)
    ours = LifecycleSettings.objects.create(tenant=tenant, decay_after_days=50)
    make_staff(tenant_admin, "memories.view_lifecyclesettings", "memories.change_lifecyclesettings")
    client.force_login(tenant_admin)
    assert client.get(f"/admin/memories/lifecyclesettings/{ours.pk}/preview/").status_code == 200
    assert client.get(f"/admin/memories/lifecyclesettings/{theirs.pk}/preview/").status_code == 404
    form = {"tenant": tenant.pk, "decay_after_days": "45", "decay_below_importance": "", "compress_min": "",
            "compressed_keep_days": ""}  # fmt: skip
    assert client.post(f"/admin/memories/lifecyclesettings/{ours.pk}/change/", form).status_code == 302
    ours.refresh_from_db()
    assert ours.decay_after_days == 45
