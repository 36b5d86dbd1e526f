import subprocess
import tempfile
from pathlib import Path

import psycopg
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from almanac.pgtools import conninfo, libpq_env, pg_tool


def table_count(database: str | None = None) -> int:
    """Tables in the public schema of the configured database (or `database` beside it)."""
    with psycopg.connect(**conninfo(database)) as conn:
        return conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0]


class Command(BaseCommand):
    help = (
        "Restore a dump written by `backup` into the configured database (empty, or with --clean "
        "replacing what is there), all or nothing, then apply newer migrations. Stop the service first."
    )

    def add_arguments(self, parser):
        parser.add_argument("dump", help="a file written by `manage.py backup`")
        parser.add_argument(
            "--clean",
            action="store_true",
            help="drop what the database holds before restoring (it is replaced)",
        )
        parser.add_argument("--database", help="restore into this database on the same server instead")
        parser.add_argument("--no-migrate", action="store_true", help="do not run migrate afterwards")

    def handle(self, dump, clean, database, no_migrate, **options):
        if not Path(dump).is_file():
            raise CommandError(f"{dump}: no such file")
        target = database or connections["default"].settings_dict["NAME"]
        try:
            existing = table_count(database)
        except psycopg.Error as exc:
            raise CommandError(f"cannot connect to database {target}: {exc}".strip()) from exc
        if existing and not clean:
            raise CommandError(
                f"database {target} is not empty ({existing} tables): restore into an empty database, "
                "or pass --clean to replace what it holds"
            )
        with tempfile.TemporaryDirectory() as scratch:
            # The dump as SQL first (objects owned by the connecting role, the one the app runs
            # as): a dump that can't be read all through changes nothing.
            sql = Path(scratch) / "restore.sql"
            read = subprocess.run(
                [pg_tool("pg_restore"), "--no-owner", "--no-privileges", "--file", str(sql), dump],
                capture_output=True,
                text=True,
            )
            if read.returncode != 0:
                raise CommandError(
                    f"{dump} is not a readable dump, nothing was changed: {read.stderr.strip()}"
                )
            # Then one transaction: a restore that fails half way leaves the database as it
            # was. --clean empties the schema first, so tables of newer migrations go too.
            psql = [
                pg_tool("psql"),
                "--no-psqlrc",
                "--quiet",
                "--single-transaction",
                "-v",
                "ON_ERROR_STOP=1",
            ]
            if clean:
                psql += ["-c", "DROP SCHEMA public CASCADE", "-c", "CREATE SCHEMA public"]
            result = subprocess.run(
                [*psql, "--file", str(sql)], env=libpq_env(database), capture_output=True, text=True
            )
        if result.returncode != 0:
            raise CommandError(f"restore failed, nothing was changed: {result.stderr.strip()}")
        self.stdout.write(f"restored {dump} into {target}")
        if not no_migrate and not database:
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("migrations applied")
