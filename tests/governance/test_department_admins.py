"""Department admins (docs/operations.md, Roles): staff held to their departments' and
projects' users, memories, sources and audit entries; every other admin page is closed."""

import pytest

from almanac.models import AuditEvent, Department
from almanac.services.users import user_create
from connectors.models import Source
from memories.models import Memory
from memories.services.memories import memory_create
from tests.staff import make_staff

pytestmark = pytest.mark.django_db


def _listed(client, url) -> set:
    return {obj.pk for obj in client.get(url).context["cl"].result_list}


def test_a_department_admin_lists_only_their_departments_users(client, sales_admin, alice, bob, charlie):
    client.force_login(sales_admin)
    assert _listed(client, "/admin/auth/user/") == {alice.pk, sales_admin.pk}
    assert alice.profile.pk in _listed(client, "/admin/almanac/userprofile/")
    assert charlie.profile.pk not in _listed(client, "/admin/almanac/userprofile/")


def test_a_department_admin_cannot_open_or_change_a_user_outside(client, sales_admin, charlie):
    client.force_login(sales_admin)
    assert client.get(f"/admin/auth/user/{charlie.pk}/change/").status_code == 302  # Django: "not found"
    response = client.post(f"/admin/auth/user/{charlie.pk}/change/", {"username": "charlie2"})
    assert response.status_code == 302
    charlie.refresh_from_db()
    assert charlie.username == "charlie"
    assert client.get(f"/admin/governance/user/{charlie.pk}/").status_code == 404


def test_a_department_admin_sees_only_their_scope_s_memories(client, sales_admin, alice, charlie):
    sales = memory_create(
        owner=alice, content="Sales pipeline review is on Mondays", scope="dept", scope_key="Sales"
    )[0]
    alices = memory_create(owner=alice, content="Alice shares the travel policy", scope="tenant")[0]
    charlies = memory_create(owner=charlie, content="Charlie shares the on-call rota", scope="tenant")[0]
    client.force_login(sales_admin)
    listed = _listed(client, "/admin/memories/memory/")
    assert {sales.pk, alices.pk} <= listed and charlies.pk not in listed
    # Readable to her through the access filter, but not hers to govern: no change, no archive.
    assert client.get(f"/admin/memories/memory/{charlies.pk}/change/").status_code == 302
    client.post("/admin/memories/memory/", {"action": "archive", "_selected_action": [charlies.pk]})
    assert Memory.objects.get(pk=charlies.pk).status == "active"


def test_a_department_admin_sees_only_their_scope_s_audit_entries(client, sales_admin, alice, charlie):
    memory_create(owner=alice, content="Sales targets for Q3 are set", scope="dept", scope_key="Sales")
    memory_create(owner=charlie, content="Engineering uses trunk-based development", scope="dept",
                  scope_key="Engineering")  # fmt: skip
    client.force_login(sales_admin)
    shown = AuditEvent.objects.filter(pk__in=_listed(client, "/admin/almanac/auditevent/"))
    assert shown.filter(action="memory.create", detail__owner=alice.pk).exists()
    assert not shown.filter(detail__owner=charlie.pk).exists()
    assert not shown.filter(object_type="access_group", object_id="dept:engineering").exists()
    assert shown.count() < AuditEvent.objects.filter(tenant=alice.profile.tenant).count()


def test_a_department_admin_governs_only_their_scope_s_sources(client, tenant, sales_admin):
    ours = Source.objects.create(tenant=tenant, kind="notes", name="sales-notes", config={})
    ours.departments.add(Department.objects.get(tenant=tenant, name="Sales"))
    theirs = Source.objects.create(tenant=tenant, kind="notes", name="eng-notes", config={})
    client.force_login(sales_admin)
    assert _listed(client, "/admin/connectors/source/") == {ours.pk}
    assert client.get(f"/admin/connectors/source/{theirs.pk}/change/").status_code == 302


def test_admin_pages_without_a_unit_rule_are_closed_to_department_admins(client, sales_admin, tenant_admin):
    client.force_login(sales_admin)
    assert client.get("/admin/almanac/agentkey/").status_code == 403
    assert "agentkey" not in client.get("/admin/").content.decode()
    client.force_login(tenant_admin)  # the same permissions, without a scope
    assert client.get("/admin/almanac/agentkey/").status_code == 200


def test_a_tenant_admin_still_governs_the_whole_tenant(client, tenant_admin, alice, bob, charlie):
    client.force_login(tenant_admin)
    assert {alice.pk, bob.pk, charlie.pk} <= _listed(client, "/admin/auth/user/")


def test_editing_a_profile_keeps_departments_outside_the_scope(client, tenant, sales_admin):
    erin = user_create(tenant=tenant, username="erin", departments=["Sales", "Engineering"])
    sales = Department.objects.get(tenant=tenant, name="Sales")
    client.force_login(sales_admin)
    form = {"user": erin.pk, "tenant": tenant.pk, "departments": [sales.pk], "projects": [],
            "title": "Account executive", "display_name": "Erin"}  # fmt: skip
    response = client.post(f"/admin/almanac/userprofile/{erin.profile.pk}/change/", form)
    assert response.status_code == 302, response.content[:500]
    erin.profile.refresh_from_db()
    assert erin.profile.title == "Account executive"
    assert set(erin.profile.departments.values_list("name", flat=True)) == {"Sales", "Engineering"}


def test_only_superusers_make_department_admins(client, tenant_admin, superadmin):
    make_staff(tenant_admin, "almanac.view_adminscope", "almanac.add_adminscope")
    client.force_login(tenant_admin)
    assert client.get("/admin/almanac/adminscope/").status_code == 403
    client.force_login(superadmin)
    assert client.get("/admin/almanac/adminscope/").status_code == 200


def test_the_scope_follows_the_department_s_members(client, tenant, sales_admin, charlie):
    client.force_login(sales_admin)
    assert charlie.pk not in _listed(client, "/admin/auth/user/")
    charlie.profile.departments.add(Department.objects.get(tenant=tenant, name="Sales"))
    assert charlie.pk in _listed(client, "/admin/auth/user/")


def test_a_department_admin_sees_only_their_scope_s_agent_calls(client, tenant, sales_admin, alice, charlie):
    from django.utils import timezone

    from metrics.models import ContextCall

    calls = {
        user: ContextCall.objects.create(
            tenant=tenant, user=user, at=timezone.now(), task="renewal", task_digest="renewal", latency_ms=9
        )
        for user in (alice, charlie)
    }
    client.force_login(make_staff(sales_admin, "metrics.view_contextcall"))
    assert _listed(client, "/admin/metrics/contextcall/") == {calls[alice].pk}


def test_a_department_admin_lists_and_restores_only_their_scope_s_deleted_memories(
    client, sales_admin, alice, charlie
):
    from memories.services.memories import memory_delete

    sales = memory_create(owner=alice, content="Sales pipeline review moved to Tuesdays", scope="tenant")[0]
    outside = memory_create(owner=charlie, content="Charlie's on-call rota is weekly", scope="tenant")[0]
    sales_id, outside_id = sales.pk, outside.pk
    for memory in (sales, outside):
        memory_delete(memory=memory, user=memory.owner)
    client.force_login(sales_admin)
    page = client.get("/admin/memories/memory/deleted/").content.decode()
    # Readable to her (tenant-wide) but charlie is not in Sales: not hers to govern.
    assert "Sales pipeline review" in page and "on-call rota" not in page
    assert ">alice<" in page  # the owner by name, not by id
    client.post(f"/admin/memories/memory/deleted/{outside_id}/restore/")
    assert not Memory.objects.filter(pk=outside_id).exists()
    client.post(f"/admin/memories/memory/deleted/{sales_id}/restore/")
    assert Memory.objects.filter(pk=sales_id).exists()
