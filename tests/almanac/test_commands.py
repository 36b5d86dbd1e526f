from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from almanac.models import AgentKey, Tenant
from almanac.selectors import agentkey_for_secret, user_group_keys

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_tenant_create_is_idempotent():
    assert "created" in run("tenant_create", "initech", "--name", "Initech")
    assert "exists" in run("tenant_create", "initech")
    assert Tenant.objects.get(slug="initech").name == "Initech"


def test_tenant_create_rejects_a_bad_slug():
    with pytest.raises(CommandError, match="invalid tenant slug"):
        run("tenant_create", "Not A Slug!")


def test_user_create_with_departments_and_projects():
    run("tenant_create", "initech")
    out = run(
        "user_create",
        "initech",
        "peter",
        "--email",
        "peter@initech.com",
        "--dept",
        "财务部",
        "--dept",
        "IT",
        "--project",
        "TPS",
        "--password",
        "s3cret-pass",
    )
    assert "财务部" in out and "TPS" in out
    from django.contrib.auth import get_user_model

    peter = get_user_model().objects.get(username="peter")
    assert peter.check_password("s3cret-pass")
    assert set(user_group_keys(peter)) == {
        "user:peter",
        "tenant:initech",
        "dept:财务部",
        "dept:it",
        "project:tps",
    }
    run("user_create", "initech", "peter", "--project", "Jump")  # idempotent; adds
    assert "project:jump" in user_group_keys(peter)


def test_user_create_admin_flag():
    run("tenant_create", "initech")
    run("user_create", "initech", "boss", "--admin", "--password", "x-very-secret")
    from django.contrib.auth import get_user_model

    boss = get_user_model().objects.get(username="boss")
    assert boss.is_staff and boss.is_superuser


def test_user_create_errors():
    with pytest.raises(CommandError, match="unknown tenant"):
        run("user_create", "nope", "peter")
    run("tenant_create", "initech")
    run("tenant_create", "globex")
    run("user_create", "initech", "peter")
    run("user_create", "globex", "peter")  # names are per tenant: another peter (tests/almanac/test_users.py)
    with pytest.raises(CommandError, match="invalid username"):
        run("user_create", "initech", "bad name")


def test_agentkey_create_prints_the_key_alone_on_the_last_line():
    run("tenant_create", "initech")
    out = run("agentkey_create", "initech", "bot", "--connector")
    raw = out.strip().splitlines()[-1]
    key = agentkey_for_secret(raw)
    assert key is not None and key.name == "bot" and key.can_push_events
    assert raw not in AgentKey.objects.get(pk=key.pk).hashed_secret


def test_agentkey_create_errors():
    with pytest.raises(CommandError, match="unknown tenant"):
        run("agentkey_create", "nope", "bot")
    run("tenant_create", "initech")
    run("agentkey_create", "initech", "bot")
    with pytest.raises(CommandError, match="already exists"):
        run("agentkey_create", "initech", "bot")


def test_demo_is_idempotent():
    first = run("demo")
    assert "agent key demo-agent (shown once): alm_" in first
    second = run("demo")
    assert "already exist" in second
    assert Tenant.objects.filter(slug="acme").count() == 1


def test_running_the_demo_again_keeps_changed_passwords_and_revoked_keys():
    from django.contrib.auth import get_user_model

    from almanac.models import AgentKey
    from almanac.services.keys import agentkey_revoke

    run("demo")
    users = get_user_model().objects
    for name in ("alice", "admin"):
        user = users.get(username=name)
        user.set_password("a-better-secret-42")
        user.save()
    agentkey_revoke(key=AgentKey.objects.get(name="demo-agent"))
    again = run("demo")
    assert "shown once" not in again  # no key minted again
    for name in ("alice", "admin"):
        user = users.get(username=name)
        assert user.check_password("a-better-secret-42") and not user.check_password("almanac-demo")
    assert AgentKey.objects.filter(name="demo-agent").count() == 1


def test_backup_writes_a_restorable_dump(tmp_path, tenant):
    import subprocess

    from almanac.pgtools import pg_tool

    target = tmp_path / "almanac.dump"
    assert "wrote" in run("backup", str(target))
    listing = subprocess.run([pg_tool("pg_restore"), "--list", str(target)], capture_output=True, text=True)
    assert listing.returncode == 0
    assert "almanac_tenant" in listing.stdout


@pytest.fixture
def spare_database():
    """An empty database beside the test database, dropped afterwards."""
    import uuid

    import psycopg

    from almanac.pgtools import conninfo

    name = f"restore_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(**conninfo("postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield name
    with psycopg.connect(**conninfo("postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.mark.django_db(transaction=True)
def test_restore_brings_a_backup_back_all_or_nothing(tmp_path, spare_database):
    import psycopg

    from almanac.pgtools import conninfo

    def query(sql):
        with psycopg.connect(**conninfo(spare_database)) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else None

    Tenant.objects.create(slug="initech", name="Initech")
    dump = tmp_path / "almanac.dump"
    run("backup", str(dump))

    assert "restored" in run("restore", str(dump), "--database", spare_database)
    assert query("SELECT slug FROM almanac_tenant") == [("initech",)]
    # the audit log stays append-only in the restored copy
    assert query("SELECT tgname FROM pg_trigger WHERE tgname = 'almanac_audit_no_update'") != []

    with pytest.raises(CommandError, match="is not empty"):
        run("restore", str(dump), "--database", spare_database)

    # --clean replaces everything, tables the dump does not know included
    query("CREATE TABLE stray (id int)")
    query("UPDATE almanac_tenant SET name = 'changed' RETURNING 1")
    run("restore", str(dump), "--database", spare_database, "--clean")
    assert query("SELECT slug, name FROM almanac_tenant") == [("initech", "Initech")]
    assert query("SELECT count(*) FROM pg_tables WHERE tablename = 'stray'") == [(0,)]

    # a cut-off dump changes nothing, even with --clean
    cut = tmp_path / "cut.dump"
    cut.write_bytes(dump.read_bytes()[: dump.stat().st_size // 2])
    with pytest.raises(CommandError, match="nothing was changed"):
        run("restore", str(cut), "--database", spare_database, "--clean")
    assert query("SELECT slug FROM almanac_tenant") == [("initech",)]

    with pytest.raises(CommandError, match="no such file"):
        run("restore", str(tmp_path / "missing.dump"))


def test_client_tools_get_the_ssl_settings_of_the_database(monkeypatch):
    from django.db import connections

    from almanac.pgtools import libpq_env

    options = connections["default"].settings_dict.setdefault("OPTIONS", {})
    monkeypatch.setitem(options, "sslmode", "verify-full")
    monkeypatch.setitem(options, "sslrootcert", "/etc/ssl/db-ca.pem")
    env = libpq_env()
    assert (env["PGSSLMODE"], env["PGSSLROOTCERT"]) == ("verify-full", "/etc/ssl/db-ca.pem")
    assert env["PGDATABASE"] == connections["default"].settings_dict["NAME"]
    assert "hnsw" not in " ".join(env.values())  # our session settings are for the app's connections


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("tenant_create", "initech", "--name", "x" * 201), "tenant name is 201 characters long"),
        (("user_create", "acme", "peter", "--email", "not-an-email"), "invalid email"),
        (
            ("user_create", "acme", "peter", "--password", "short"),
            "password refused: This password is too short",
        ),
        (("user_create", "acme", "peter", "--dept", "部" * 201), "department name is 201 characters long"),
        (("reembed", "--batch", "-5"), "--batch must be 1 or more"),
    ],
)
def test_bad_command_input_is_a_clear_error_that_changes_nothing(tenant, args, error):
    from django.contrib.auth import get_user_model

    with pytest.raises(CommandError, match=error):
        run(*args)
    assert not get_user_model().objects.filter(username="peter").exists()
    assert not Tenant.objects.filter(slug="initech").exists()


def test_an_unreadable_secret_file_is_named_in_the_error(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "SECRET_KEY_FILE": str(tmp_path / "missing")}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert f"SECRET_KEY_FILE: cannot read {tmp_path / 'missing'}" in result.stderr
