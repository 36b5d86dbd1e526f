"""Every change made in the admin leaves an audit event (almanac.admin_audit), and the audit
list filters, links and exports them."""

import csv
import io

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import Group, Permission

from almanac.models import AuditEvent
from almanac.services.audit import audit_record
from connectors.models import Source
from connectors.services.sources import source_ensure
from tests.conftest import user_admin_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(tenant):
    from almanac.services.users import user_create

    return user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")


@pytest.fixture
def root_client(client, root):
    client.force_login(root)
    return client


def _last(object_type: str) -> AuditEvent:
    return AuditEvent.objects.filter(object_type=object_type).order_by("pk").last()


def test_making_someone_staff_with_permissions_is_one_audited_change(root_client, bob, tenant):
    perms = list(Permission.objects.filter(content_type__app_label="memories").order_by("pk")[:9])
    form = user_admin_form(bob, is_staff="on", user_permissions=[p.pk for p in perms])
    response = root_client.post(f"/admin/auth/user/{bob.pk}/change/", form)
    assert response.status_code == 302
    event = _last("user")
    assert (event.action, event.actor, event.object_id, event.tenant_id) == (
        "admin.change", "root", str(bob.pk), tenant.pk,
    )  # fmt: skip
    changes = event.detail["changes"]
    assert changes["is_staff"] == [False, True]
    assert changes["user_permissions"] == {
        "added": sorted(f"memories.{p.codename}" for p in perms),
        "removed": [],
    }


def test_group_and_superuser_changes_are_audited(root_client, bob):
    group = Group.objects.create(name="auditors")
    form = user_admin_form(bob, is_superuser="on", groups=[group.pk])
    root_client.post(f"/admin/auth/user/{bob.pk}/change/", form)
    changes = _last("user").detail["changes"]
    assert changes["is_superuser"] == [False, True]
    assert changes["groups"] == {"added": ["auditors"], "removed": []}
    root_client.post(f"/admin/auth/user/{bob.pk}/change/", user_admin_form(bob))  # all taken back
    changes = _last("user").detail["changes"]
    assert changes["is_superuser"] == [True, False] and changes["groups"]["removed"] == ["auditors"]


def test_a_password_set_in_the_admin_is_audited_without_the_password(root_client, bob):
    response = root_client.post(
        f"/admin/auth/user/{bob.pk}/password/",
        {"password1": "n3w-Secret-pw!", "password2": "n3w-Secret-pw!", "usable_password": "true"},
    )
    assert response.status_code == 302
    event = _last("user")
    assert event.action == "admin.change" and "n3w-Secret-pw!" not in str(event.detail)


def test_a_permission_group_change_is_audited(root_client):
    perm = Permission.objects.get(codename="delete_memory")
    root_client.post("/admin/auth/group/add/", {"name": "governors", "permissions": [perm.pk]})
    event = _last("auth.group")
    assert event.action == "admin.add"
    assert event.detail["changes"]["permissions"]["added"] == ["memories.delete_memory"]


def _source_form(source, **changes) -> dict:
    data = {
        "tenant": source.tenant_id, "kind": source.kind, "name": source.name, "config": '{"repos": ["a/b"]}',
        "enabled": "on", "poll_minutes": source.poll_minutes, "new_credentials": "",
        "cursor-TOTAL_FORMS": 0, "cursor-INITIAL_FORMS": 0, "cursor-MIN_NUM_FORMS": 0,
        "cursor-MAX_NUM_FORMS": 1,
    }  # fmt: skip
    return {**data, **changes}


def test_source_settings_and_credentials_changes_are_audited_without_the_secret(
    root_client, tenant, settings
):
    settings.CONNECTOR_SECRET_KEY = Fernet.generate_key().decode()
    source = source_ensure(tenant=tenant, name="github", config={"repos": ["a/b"]})
    form = _source_form(
        source, config='{"repos": ["a/b", "c/d"]}', poll_minutes=30, new_credentials="ghp_s3cret"
    )
    response = root_client.post(f"/admin/connectors/source/{source.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    event = _last("source")
    assert (event.action, event.tenant_id, event.object_id) == ("admin.change", tenant.pk, str(source.pk))
    changes = event.detail["changes"]
    assert changes["config"] == [{"repos": ["a/b"]}, {"repos": ["a/b", "c/d"]}]
    assert changes["poll_minutes"] == [source.poll_minutes, 30]
    assert changes["new_credentials"] == "(hidden)" and "ghp_s3cret" not in str(event.detail)


def test_an_unchanged_save_records_nothing_and_a_delete_does(root_client, tenant):
    source = source_ensure(tenant=tenant, name="github", config={"repos": ["a/b"]})
    before = AuditEvent.objects.count()
    root_client.post(f"/admin/connectors/source/{source.pk}/change/", _source_form(source))
    assert AuditEvent.objects.count() == before
    root_client.post(f"/admin/connectors/source/{source.pk}/delete/", {"post": "yes"})
    assert not Source.objects.filter(pk=source.pk).exists()
    assert _last("source").action == "admin.delete"


def test_the_source_list_says_how_far_behind_and_shows_the_error(root_client, tenant):
    from connectors.services.sources import sync_failure

    source = source_ensure(tenant=tenant, name="github", config={"repos": ["a/b"]})
    sync_failure(source=source, error="HTTP 503 upstream down", retry_after=3 * 3600)
    page = root_client.get("/admin/connectors/source/").content.decode()
    assert "HTTP 503 upstream down" in page and "error-fg" in page and "for 2 h" in page
    edit = root_client.get(f"/admin/connectors/source/{source.pk}/change/").content.decode()
    assert "Sync status" in edit and "HTTP 503 upstream down" in edit and "failures in a row" in edit


def test_audit_list_filters_by_actor_type_and_dates_and_links_objects(root_client, tenant, alice):
    from memories.services.memories import memory_create

    memory, _ = memory_create(owner=alice, content="the staging database is on port 5433")
    audit_record(action="note", tenant=tenant, actor="someone-else", object_type="x", object_id=1)
    page = root_client.get("/admin/almanac/auditevent/?actor=alice&object_type=memory").content.decode()
    assert f'href="/admin/memories/memory/{memory.pk}/change/"' in page
    assert '<td class="field-actor">someone-else</td>' not in page
    empty = root_client.get("/admin/almanac/auditevent/?created_at__until=2000-01-01").content.decode()
    assert f"/admin/memories/memory/{memory.pk}/change/" not in empty
    today = AuditEvent.objects.last().created_at.date().isoformat()
    page = root_client.get(f"/admin/almanac/auditevent/?created_at__since={today}").content.decode()
    assert '<td class="field-actor">someone-else</td>' in page


def test_audit_csv_export_is_the_filtered_list_with_a_byte_order_mark(root_client, tenant):
    audit_record(action="note", tenant=tenant, actor="张伟", object_type="x", object_id=1)
    audit_record(action="note", tenant=tenant, actor="bob", object_type="x", object_id=2)
    response = root_client.get("/admin/almanac/auditevent/export.csv?actor=张伟")
    body = response.content.decode("utf-8")
    assert response["Content-Type"].startswith("text/csv") and body.startswith("\ufeff")
    rows = list(csv.DictReader(io.StringIO(body.lstrip("\ufeff"))))
    assert [(r["actor"], r["object_id"]) for r in rows] == [("张伟", "1")]


def test_scoped_staff_export_only_their_tenant(client, bob, tenant, other_tenant):
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    bob.user_permissions.add(Permission.objects.get(codename="view_auditevent"))
    audit_record(action="note", tenant=tenant, actor="ours", object_type="x", object_id=1)
    audit_record(action="note", tenant=other_tenant, actor="theirs", object_type="x", object_id=2)
    client.force_login(bob)
    body = client.get("/admin/almanac/auditevent/export.csv").content.decode()
    assert "ours" in body and "theirs" not in body


def test_making_someone_a_department_admin_is_audited(root_client, bob, tenant):
    from almanac.models import Department

    finance = Department.objects.get(tenant=tenant, name="Finance")
    response = root_client.post(
        "/admin/almanac/adminscope/add/", {"user": bob.pk, "departments": [finance.pk]}
    )
    assert response.status_code == 302
    event = _last("almanac.adminscope")
    assert (event.action, event.tenant_id) == ("admin.add", tenant.pk)
    assert event.detail["changes"]["departments"] == {"added": ["Finance"], "removed": []}
