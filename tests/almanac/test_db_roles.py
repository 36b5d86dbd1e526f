"""The runtime role (what the app and this whole suite connect as) holds rows only: it owns
no table, is no superuser, and may only INSERT and SELECT on the audit log."""

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from almanac.models import AuditEvent
from almanac.services.audit import audit_record

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        settings.DATABASE_ROLES["runtime"] == settings.DATABASE_ROLES["owner"],
        reason="one role does both (DATABASE_URL without DATABASE_OWNER_URL)",
    ),
]
RUNTIME, OWNER = settings.DATABASE_ROLES["runtime"], settings.DATABASE_ROLES["owner"]

REFUSED = [
    "TRUNCATE almanac_auditevent",
    "TRUNCATE memories_memory CASCADE",
    "ALTER TABLE almanac_auditevent DISABLE TRIGGER almanac_audit_no_update",
    "ALTER TABLE almanac_auditevent DISABLE TRIGGER ALL",
    "DROP TRIGGER almanac_audit_chain ON almanac_auditevent",
    "DROP TABLE almanac_auditevent",
    "CREATE OR REPLACE FUNCTION almanac_audit_chain() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'",
    "SET session_replication_role = replica",
    "SET LOCAL session_replication_role = replica",
    "UPDATE almanac_auditevent SET action = 'nothing happened'",
    "DELETE FROM almanac_auditevent",
    "CREATE TABLE almanac_sneaky (id int)",
]


def _refused(sql: str) -> str:
    with pytest.raises(DatabaseError) as info, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    return getattr(info.value.__cause__, "sqlstate", "")


@pytest.mark.parametrize("sql", REFUSED)
def test_the_runtime_role_is_refused(tenant, sql):
    audit_record(action="memory.purge", tenant=tenant, actor="admin")
    assert _refused(sql) == "42501"  # insufficient_privilege
    assert AuditEvent.objects.filter(action="memory.purge").count() == 1


def test_the_runtime_role_is_no_superuser_and_owns_nothing():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_user, rolsuper, rolcreaterole, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        )
        user, superuser, createrole, bypassrls = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM pg_class WHERE pg_get_userbyid(relowner) = current_user")
        owned = cursor.fetchone()[0]
        cursor.execute(
            "SELECT count(*) FROM pg_database WHERE datname = current_database() AND pg_get_userbyid(datdba) = current_user"
        )
        owns_database = cursor.fetchone()[0]
    assert user == settings.DATABASE_ROLES["runtime"] != settings.DATABASE_ROLES["owner"]
    assert (superuser, createrole, bypassrls, owned, owns_database) == (False, False, False, 0, 0)


def test_the_runtime_role_reads_and_writes_rows_of_every_table():
    """Every table the migrations made is granted (default privileges), the audit log only
    INSERT and SELECT."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, has_table_privilege(c.oid, 'SELECT'), has_table_privilege(c.oid, 'INSERT'),"
            " has_table_privilege(c.oid, 'UPDATE'), has_table_privilege(c.oid, 'DELETE'),"
            " has_table_privilege(c.oid, 'TRUNCATE')"
            " FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')"
        )
        rights = {name: tuple(flags) for name, *flags in cursor.fetchall()}
    assert rights.pop("almanac_auditevent") == (True, True, False, False, False)
    assert len(rights) > 30
    assert {flags for flags in rights.values()} == {(True, True, True, True, False)}


def test_a_forged_insert_is_chained_and_stamped_now(tenant):
    first = audit_record(action="memory.create", tenant=tenant, actor="alice")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO almanac_auditevent (tenant_id, actor, action, object_type, object_id, detail,"
            " created_at, seq, prev_digest, digest) VALUES (%s, 'x', 'forged', '', '', '{}',"
            " '2001-01-01', 1, '', 'f00') RETURNING seq, prev_digest, digest, created_at",
            [tenant.pk],
        )
        seq, prev_digest, digest, created_at = cursor.fetchone()
    assert (seq, prev_digest) == (2, first.digest) and digest != "f00" and len(digest) == 64
    assert created_at >= first.created_at


def test_db_roles_prints_its_sql_without_changing_anything(capsys):
    from django.core.management import call_command

    call_command("db_roles", "--print")
    printed = capsys.readouterr().out
    assert f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "public" TO "{RUNTIME}";' in printed
    assert f'ALTER DEFAULT PRIVILEGES FOR ROLE "{OWNER}" IN SCHEMA "public" GRANT' in printed
    assert "REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON" in printed


def test_db_roles_is_idempotent_and_keeps_the_runtime_role_in_its_place(capsys):
    from django.core.management import call_command

    call_command("db_roles")
    call_command("db_roles")
    assert "ready in database" in capsys.readouterr().out
    test_the_runtime_role_reads_and_writes_rows_of_every_table()
    test_the_runtime_role_is_no_superuser_and_owns_nothing()
    if not settings.DATABASE_URL:
        with connection.cursor() as cursor:
            cursor.execute("SELECT rolcreatedb FROM pg_roles WHERE rolname = %s", [OWNER])
            assert cursor.fetchone() == (True,)  # the embedded owner still creates test databases


def _owner_connection():
    import psycopg

    from almanac.pgtools import conninfo

    owner = settings.DATABASES["owner"]
    return psycopg.connect(
        **{**conninfo(), "user": owner["USER"], "password": owner.get("PASSWORD") or ""}, autocommit=True
    )


def test_a_table_a_later_migration_creates_is_granted_by_default():
    with _owner_connection() as conn:
        conn.execute("CREATE TABLE almanac_probe_later (id bigint)")
        try:
            granted = conn.execute(
                "SELECT has_table_privilege(%s, 'almanac_probe_later', 'SELECT, INSERT, UPDATE, DELETE'),"
                " has_table_privilege(%s, 'almanac_probe_later', 'TRUNCATE')",
                [RUNTIME, RUNTIME],
            ).fetchone()
        finally:
            conn.execute("DROP TABLE almanac_probe_later")
    assert granted == (True, False)


@pytest.mark.db_owner
def test_migrate_repairs_the_runtime_role_s_grants():
    from django.core.management import call_command

    def rights():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT has_table_privilege(%s, 'memories_memory', 'UPDATE'),"
                " has_table_privilege(%s, 'almanac_auditevent', 'UPDATE')",
                [RUNTIME, RUNTIME],
            )
            return cursor.fetchone()

    with connection.cursor() as cursor:
        cursor.execute(f'REVOKE UPDATE ON memories_memory FROM "{RUNTIME}"')
        cursor.execute(f'GRANT UPDATE ON almanac_auditevent TO "{RUNTIME}"')
    assert rights() == (False, True)
    call_command("migrate", verbosity=0)
    assert rights() == (True, False)
