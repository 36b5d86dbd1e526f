import pytest
from django.db import DatabaseError, transaction

from almanac.models import AuditEvent
from almanac.services.audit import audit_record

pytestmark = pytest.mark.django_db


def test_audit_events_are_recorded(tenant):
    event = audit_record(
        action="wiki.confirm", tenant=tenant, actor="alice", object_type="section", object_id=7
    )
    assert AuditEvent.objects.get(pk=event.pk).object_id == "7"


def test_the_database_refuses_updates_and_deletes(tenant):
    event = audit_record(action="memory.purge", tenant=tenant, actor="admin")
    with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(action="nothing happened")
    with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).delete()
    assert AuditEvent.objects.get(pk=event.pk).action == "memory.purge"


def _events(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("pk"))


@pytest.fixture
def root(tenant):
    from almanac.services.users import user_create

    return user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")


def test_memory_writes_updates_archives_and_reactivations_are_audited_without_content(alice, settings):
    from memories import services

    memory, _ = services.memory_create(owner=alice, content="The Vercel renewal is due on 2026-03-01")
    services.memory_update(
        memory=memory, user=alice, data={"importance": 0.9, "content": "Vercel renews 2026-04-01"}
    )
    services.memory_set_status(
        memories=type(memory).objects.filter(pk=memory.pk), status="archived", user=alice, reason="api"
    )
    services.memory_set_status(
        memories=type(memory).objects.filter(pk=memory.pk), status="active", user=alice, reason="api"
    )
    actions = list(
        AuditEvent.objects.filter(object_id=str(memory.pk)).order_by("pk").values_list("action", flat=True)
    )
    assert actions == ["memory.create", "memory.update", "memory.archive", "memory.reactivate"]
    assert _events("memory.update")[0].detail["fields"] == ["content", "importance"]
    assert {e.actor for e in AuditEvent.objects.filter(object_type="memory")} == {"alice"}
    assert "Vercel" not in str(list(AuditEvent.objects.values_list("detail", flat=True)))


def test_an_admin_export_is_audited_with_the_ids(client, root, alice):
    from memories import services

    ids = [services.memory_create(owner=alice, content=f"export fact number {i}")[0].pk for i in range(3)]
    client.force_login(root)
    for action in ["export_json", "export_csv"]:
        response = client.post("/admin/memories/memory/", {"action": action, "_selected_action": ids})
        assert response.status_code == 200
    json_event, csv_event = _events("memory.export")
    assert (json_event.detail["format"], csv_event.detail["format"]) == ("json", "csv")
    assert json_event.detail["ids"] == sorted(ids) and json_event.actor == "root"


def test_membership_changes_are_audited_with_who_made_them(client, root, tenant, alice, bob):
    from almanac.models import AccessGroup, GroupMembership
    from almanac.services.tenancy import group_ensure, membership_add, membership_remove
    from almanac.services.users import user_set_projects

    group = group_ensure(
        tenant=tenant, key="slack:channel:CM1", kind=AccessGroup.Kind.SOURCE, name="#m-and-a"
    )
    membership_add(user=alice, group=group, origin="slack")
    membership_add(user=alice, group=group, origin="slack")  # already a member: nothing new
    membership_remove(user=alice, group=group, actor="carol")
    grant, revoke = _events("access.grant")[-1], _events("access.revoke")[-1]
    assert (grant.object_id, grant.detail["users"], grant.actor) == ("slack:channel:CM1", ["alice"], "slack")
    assert (revoke.detail["users"], revoke.actor) == (["alice"], "carol")
    assert len([e for e in _events("access.grant") if e.object_id == "slack:channel:CM1"]) == 1

    user_set_projects(user=bob, names=["Zephyr"])  # the directory: bob leaves Apollo
    left = _events("access.revoke")[-1]
    assert (left.object_id, left.detail["users"], left.actor) == ("project:apollo", ["bob"], "directory")

    client.force_login(root)
    response = client.post(
        "/admin/almanac/groupmembership/add/", {"user": bob.pk, "group": group.pk, "origin": "admin"}
    )
    assert response.status_code == 302, response.content
    added = _events("access.grant")[-1]
    assert (added.object_id, added.detail["users"], added.actor) == ("slack:channel:CM1", ["bob"], "root")
    membership = GroupMembership.objects.get(user=bob, group=group)
    response = client.post(f"/admin/almanac/groupmembership/{membership.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    removed = _events("access.revoke")[-1]
    assert (removed.detail["users"], removed.actor) == (["bob"], "root")


def test_a_connector_membership_list_is_audited(tenant, alice, bob):
    from connectors import services
    from tests.connectors.conftest import make_event

    services.event_ingest(tenant=tenant, payload=make_event())
    grant = _events("access.grant")[-1]
    assert (grant.object_id, grant.detail["users"]) == ("slack:channel:C123", ["alice", "bob"])
    assert grant.actor == "connector:slack"


def test_agent_keys_are_audited_and_their_hash_never_shown(client, root, tenant):
    from almanac.services.keys import agentkey_create, agentkey_revoke

    key, raw = agentkey_create(tenant=tenant, name="crm-bot", actor="root")
    agentkey_revoke(key=key, actor="root")
    assert [e.action for e in AuditEvent.objects.filter(object_type="agent_key")] == [
        "agentkey.create",
        "agentkey.revoke",
    ]
    client.force_login(root)
    page = client.get(f"/admin/almanac/agentkey/{key.pk}/change/").content.decode()
    assert key.prefix in page and key.hashed_secret not in page and "Hashed secret" not in page


def test_deleting_an_access_group_in_the_admin_revokes_its_members_on_record(
    client, root, tenant, alice, bob
):
    from almanac.models import AccessGroup
    from almanac.services.tenancy import group_ensure, membership_add

    group = group_ensure(tenant=tenant, key="slack:channel:CDEL", kind=AccessGroup.Kind.SOURCE, name="#gone")
    for user in (alice, bob):
        membership_add(user=user, group=group, origin="slack")
    client.force_login(root)
    response = client.post(f"/admin/almanac/accessgroup/{group.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    revoked = _events("access.revoke")[-1]
    assert (revoked.object_id, revoked.detail["users"], revoked.actor) == (
        "slack:channel:CDEL",
        ["alice", "bob"],
        "root",
    )


def test_the_revoke_action_says_what_it_did(client, root, tenant):
    from almanac.services.keys import agentkey_create

    fresh, _ = agentkey_create(tenant=tenant, name="bot-a", actor="root")
    old, _ = agentkey_create(tenant=tenant, name="bot-b", actor="root")
    client.force_login(root)
    client.post("/admin/almanac/agentkey/", {"action": "revoke", "_selected_action": [old.pk]})
    response = client.post(
        "/admin/almanac/agentkey/", {"action": "revoke", "_selected_action": [fresh.pk, old.pk]}, follow=True
    )
    assert "1 key(s) revoked; 1 already revoked" in response.content.decode()
    assert AuditEvent.objects.filter(action="agentkey.revoke").count() == 2
