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
    from memories.services.memories import memory_create, memory_update
    from memories.services.rows import memory_set_status

    memory, _ = memory_create(owner=alice, content="The Vercel renewal is due on 2026-03-01")
    memory_update(memory=memory, user=alice, data={"importance": 0.9, "content": "Vercel renews 2026-04-01"})
    memory_set_status(
        memories=type(memory).objects.filter(pk=memory.pk), status="archived", user=alice, reason="api"
    )
    memory_set_status(
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
    from memories.services.memories import memory_create

    ids = [memory_create(owner=alice, content=f"export fact number {i}")[0].pk for i in range(3)]
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
    from connectors.services.ingest import event_ingest
    from tests.connectors.conftest import make_event

    event_ingest(tenant=tenant, payload=make_event())
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
    client.post("/admin/almanac/agentkey/", {"action": "revoke", "_selected_action": [old.pk], "post": "yes"})
    response = client.post(
        "/admin/almanac/agentkey/",
        {"action": "revoke", "_selected_action": [fresh.pk, old.pk], "post": "yes"},
        follow=True,
    )
    assert "1 key revoked; 1 already revoked" in response.content.decode()
    assert AuditEvent.objects.filter(action="agentkey.revoke").count() == 2


# --- The hash chain (manage.py audit_verify) ----------------------------------------------


def _verify(*args) -> tuple[bool, str]:
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    try:
        call_command("audit_verify", *args, stdout=out)
    except CommandError:
        return False, out.getvalue()
    return True, out.getvalue()


def test_each_tenant_has_its_own_chain(tenant, other_tenant):
    a1 = audit_record(action="a", tenant=tenant, actor="alice", detail={"n": 1, "名": "中文"})
    b1 = audit_record(action="b", tenant=other_tenant, actor="mallory")
    a2 = audit_record(action="a", tenant=tenant, actor="alice")
    assert (a1.seq, b1.seq, a2.seq) == (1, 1, 2)
    assert (a1.prev_digest, a2.prev_digest) == ("", a1.digest)
    ok, out = _verify("--tenant", "acme")
    assert ok and f"tenant acme: ok, 2 rows, head 2:{a2.digest}" in out
    assert _verify("--tenant", "acme", "--expect", f"1:{a1.digest}")[0]
    assert not _verify("--tenant", "acme", "--expect", f"1:{b1.digest}")[0]  # another digest
    assert not _verify("--tenant", "acme", "--expect", f"3:{a1.digest}")[0]  # a head that is gone


@pytest.fixture
def owner_sql():
    """Run SQL as the owner role (committed): what a database administrator could do, and
    what the chain must make visible."""
    import psycopg
    from django.conf import settings

    from almanac.pgtools import conninfo

    owner = settings.DATABASES["owner"]
    as_owner = {**conninfo(), "user": owner["USER"], "password": owner.get("PASSWORD") or ""}

    def run(*statements):
        with psycopg.connect(**as_owner, autocommit=False) as conn:
            conn.execute("ALTER TABLE almanac_auditevent DISABLE TRIGGER almanac_audit_no_update")
            for statement in statements:
                conn.execute(statement)
            conn.execute("ALTER TABLE almanac_auditevent ENABLE TRIGGER almanac_audit_no_update")

    return run


def _chain(tenant, n=4):
    return [
        audit_record(action=f"step.{i}", tenant=tenant, actor="job", object_id=i) for i in range(1, n + 1)
    ]


@pytest.mark.django_db(transaction=True)
def test_audit_verify_passes_a_clean_chain_and_catches_a_rewritten_row(tenant, owner_sql):
    rows = _chain(tenant)
    assert _verify()[0]
    owner_sql(f"UPDATE almanac_auditevent SET actor = 'someone else' WHERE id = {rows[1].pk}")
    ok, out = _verify()
    assert not ok and "FAILED at seq 2" in out and "forged" in out


@pytest.mark.django_db(transaction=True)
def test_audit_verify_catches_a_deleted_row(tenant, owner_sql):
    rows = _chain(tenant)
    owner_sql(f"DELETE FROM almanac_auditevent WHERE id = {rows[2].pk}")
    ok, out = _verify("--tenant", "acme")
    assert not ok and "FAILED at seq 4" in out and "gap: rows 3..3 are missing" in out


@pytest.mark.django_db(transaction=True)
def test_audit_verify_catches_a_back_dated_row_inserted_around_the_trigger(tenant, owner_sql):
    rows = _chain(tenant, 2)
    owner_sql(
        "ALTER TABLE almanac_auditevent DISABLE TRIGGER almanac_audit_chain",
        "INSERT INTO almanac_auditevent (tenant_id, actor, action, object_type, object_id, detail, created_at,"
        f" seq, prev_digest, digest) VALUES ({tenant.pk}, 'x', 'memory.delete', '', '', '{{}}', '2001-01-01',"
        f" 3, '{rows[1].digest}', '{'0' * 64}')",
        "ALTER TABLE almanac_auditevent ENABLE TRIGGER almanac_audit_chain",
    )
    ok, out = _verify()
    assert not ok and "FAILED at seq 3" in out and "forged" in out


@pytest.mark.django_db(transaction=True)
def test_audit_verify_catches_a_truncated_tail_with_the_kept_head(tenant, owner_sql):
    rows = _chain(tenant, 3)
    kept = f"{rows[-1].seq}:{rows[-1].digest}"
    owner_sql(f"DELETE FROM almanac_auditevent WHERE id = {rows[-1].pk}")
    assert _verify("--tenant", "acme")[0]  # nothing inside the chain shows it...
    ok, out = _verify("--tenant", "acme", "--expect", kept)  # ...the head kept elsewhere does
    assert not ok and "rows were deleted" in out


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_make_one_chain(tenant):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection as thread_connection

    def append(worker: int) -> None:
        try:
            for i in range(10):
                with transaction.atomic():
                    audit_record(action="concurrent", tenant=tenant, actor=f"w{worker}", object_id=i)
        finally:
            thread_connection.close()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(append, range(4)))
    seqs = sorted(AuditEvent.objects.filter(tenant=tenant).values_list("seq", flat=True))
    assert seqs == list(range(1, 41))
    assert _verify("--tenant", "acme")[0]


def test_an_admin_in_the_web_admin_cannot_change_or_delete_an_audit_event(client, root, tenant):
    event = audit_record(action="memory.purge", tenant=tenant, actor="root")
    client.force_login(root)
    page = client.get(f"/admin/almanac/auditevent/{event.pk}/change/")
    assert page.status_code == 200 and event.digest in page.content.decode()  # shown, read-only
    changed = client.post(f"/admin/almanac/auditevent/{event.pk}/change/", {"action": "nothing happened"})
    deleted = client.post(f"/admin/almanac/auditevent/{event.pk}/delete/", {"post": "yes"})
    bulk = client.post(
        "/admin/almanac/auditevent/",
        {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"},
    )
    assert (changed.status_code, deleted.status_code) == (403, 403) and bulk.status_code in (200, 302)
    assert AuditEvent.objects.filter(pk=event.pk, action="memory.purge").count() == 1


@pytest.mark.django_db(transaction=True)
def test_audit_verify_catches_a_row_chained_onto_an_earlier_one(tenant, owner_sql):
    rows = _chain(tenant, 3)
    # A well-formed row (its digest right for its content) that follows row 2, not row 3.
    owner_sql(
        "ALTER TABLE almanac_auditevent DISABLE TRIGGER almanac_audit_chain",
        "INSERT INTO almanac_auditevent (id, tenant_id, actor, action, object_type, object_id, detail, created_at,"
        f" seq, prev_digest, digest) SELECT 10000000, {tenant.pk}, 'x', 'memory.delete', '', '', '{{}}', date_trunc('milliseconds', now()), 4,"
        f" '{rows[1].digest}', almanac_audit_digest(4, 10000000, {tenant.pk}, 'x', 'memory.delete', '', '', '{{}}',"
        f" date_trunc('milliseconds', now()), '{rows[1].digest}')",
        "ALTER TABLE almanac_auditevent ENABLE TRIGGER almanac_audit_chain",
    )
    ok, out = _verify()
    assert not ok and "FAILED at seq 4" in out and "reordered" in out, out
