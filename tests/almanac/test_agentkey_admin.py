"""Agent keys in the admin: created with the secret shown once, revoked after a confirmation
page, never deleted."""

import pytest
from django.contrib.auth.models import Permission

from almanac.models import AgentKey, AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, bob):
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    codes = ["add_agentkey", "change_agentkey", "view_agentkey", "delete_agentkey"]
    bob.user_permissions.add(*Permission.objects.filter(codename__in=codes))
    client.force_login(bob)
    return client


def _create(client, tenant, name="crm-bot"):
    form = {"tenant": tenant.pk, "name": name, "can_act_for_users": "on", "rate_limit": ""}
    return client.post("/admin/almanac/agentkey/add/", form)


def test_a_key_created_in_the_admin_shows_its_secret_once(staff_client, tenant, api, alice):
    response = _create(staff_client, tenant)
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    key = AgentKey.objects.get(name="crm-bot")
    page = response.content.decode()
    secret = page.split('id="agent-key-secret"')[1].split(">")[1].split("<")[0]
    assert secret.startswith(key.prefix) and AgentKey.hash_secret(secret) == key.hashed_secret
    assert f"<code>Authorization: Bearer {secret}</code>" in page  # how agents send it, whole
    for url in (f"/admin/almanac/agentkey/{key.pk}/change/", "/admin/almanac/agentkey/"):
        assert secret not in staff_client.get(url).content.decode()  # never again
    event = AuditEvent.objects.get(action="agentkey.create", object_id=key.pk)
    assert (event.actor, event.object_id) == ("bob", str(key.pk))
    assert not AuditEvent.objects.filter(action="admin.add", object_type="agent_key").exists()
    assert api.__class__(secret).get("/me", user="alice").status_code == 200  # the shown secret works


def test_a_name_in_use_is_a_form_error(staff_client, tenant):
    _create(staff_client, tenant)
    response = _create(staff_client, tenant)
    assert response.status_code == 200 and "already exists" in response.content.decode()
    assert AgentKey.objects.filter(name="crm-bot").count() == 1


def test_staff_create_keys_for_their_own_tenant_only(staff_client, other_tenant):
    response = _create(staff_client, other_tenant)
    assert response.status_code == 200 and not AgentKey.objects.filter(tenant=other_tenant).exists()


def test_revoke_asks_on_its_own_page_first(staff_client, tenant):
    from almanac.services.keys import agentkey_create

    key, _ = agentkey_create(tenant=tenant, name="old-bot")
    selected = {"action": "revoke", "_selected_action": [key.pk]}
    page = staff_client.post("/admin/almanac/agentkey/", selected)
    assert page.status_code == 200 and 'name="post" value="yes"' in page.content.decode()
    key.refresh_from_db()
    assert key.revoked_at is None
    staff_client.post("/admin/almanac/agentkey/", {**selected, "post": "yes"})
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert AuditEvent.objects.get(action="agentkey.revoke").actor == "bob"


def test_keys_are_revoked_never_deleted(staff_client, tenant):
    from almanac.services.keys import agentkey_create

    key, _ = agentkey_create(tenant=tenant, name="old-bot")
    assert staff_client.post(f"/admin/almanac/agentkey/{key.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AgentKey.objects.filter(pk=key.pk).exists()
    assert "delete_selected" not in staff_client.get("/admin/almanac/agentkey/").content.decode()


def test_a_key_settings_change_is_audited(staff_client, tenant):
    from almanac.services.keys import agentkey_create

    key, _ = agentkey_create(tenant=tenant, name="old-bot")
    form = {"tenant": tenant.pk, "name": "old-bot", "can_act_for_users": "on", "rate_limit": "30/s"}
    assert staff_client.post(f"/admin/almanac/agentkey/{key.pk}/change/", form).status_code == 302
    event = AuditEvent.objects.get(action="admin.change", object_type="agent_key")
    assert event.detail["changes"]["rate_limit"] == ["", "30/s"]


def test_a_tenant_s_staff_find_their_tenant_chosen_in_the_add_form(staff_client, tenant):
    page = staff_client.get("/admin/almanac/agentkey/add/").content.decode()
    select = page.split('name="tenant"')[1].split("</select>")[0]
    assert f'<option value="{tenant.pk}" selected>' in select and "---------" not in select
