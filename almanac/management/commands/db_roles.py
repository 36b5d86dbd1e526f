"""Create or update the two database roles and the runtime role's grants (docs/operations.md,
"Database roles"). Idempotent: run it again after a restore or when in doubt."""

import psycopg
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from psycopg import sql

from almanac.pgtools import conninfo, grants_sql, ownership_sql, roles_sql


class Command(BaseCommand):
    help = (
        "Create or update the owner role (DATABASE_OWNER_URL's user: owns the tables, runs migrate) and "
        "the runtime role (DATABASE_URL's user: rows only, INSERT and SELECT on the audit log), hand "
        "what another role owns in the database to the owner, and grant the runtime role its privileges "
        "(default privileges included). Connects as --admin-url, a role that may create roles "
        "(a superuser, or one with CREATEROLE that is a member of both)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--print", action="store_true", help="print the SQL, change nothing")
        parser.add_argument(
            "--admin-url",
            help="postgres://admin@host:5432/db of an administrator (default: the embedded server's "
            "superuser, or the owner's connection)",
        )
        parser.add_argument(
            "--set-passwords",
            action="store_true",
            help="also set each role's password to the one in its URL (never printed)",
        )

    def handle(self, print, admin_url, set_passwords, **options):
        roles = settings.DATABASE_ROLES
        owner, runtime = roles["owner"], roles["runtime"]
        if not owner or not runtime or owner == runtime:
            raise CommandError(
                "one role does both: set DATABASE_OWNER_URL to the owner role's URL (another user than "
                "DATABASE_URL's) for least privilege"
            )
        database = settings.DATABASES["default"]["NAME"]
        statements = [
            # The embedded owner creates the test database; elsewhere CREATEDB is left as it is.
            *roles_sql(
                owner=owner, runtime=runtime, owner_createdb=True if not settings.DATABASE_URL else None
            ),
            "CREATE EXTENSION IF NOT EXISTS vector",
            *ownership_sql(owner=owner, database=database),
            *grants_sql(owner=owner, runtime=runtime, database=database),
        ]
        if print:
            self.stdout.write(";\n".join(statements) + ";")
            return
        try:
            with (
                psycopg.connect(**_admin_conninfo(admin_url, database), autocommit=True) as conn,
                conn.transaction(),
            ):
                for statement in statements:
                    conn.execute(statement)
                if set_passwords:
                    _set_passwords(conn)
        except psycopg.Error as exc:
            raise CommandError(f"db_roles failed, nothing was changed: {exc}".strip()) from exc
        self.stdout.write(f"roles {owner} (owner) and {runtime} (runtime) ready in database {database}")


def _admin_conninfo(admin_url: str | None, database: str) -> dict:
    if admin_url:
        import dj_database_url

        db = dj_database_url.parse(admin_url)
        given = {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "password": db["PASSWORD"]}
        return {"dbname": db["NAME"] or database, **{k: str(v) for k, v in given.items() if v}}
    return conninfo()  # the embedded server's superuser, or the owner


def _set_passwords(conn) -> None:
    for alias in ("default", "owner"):
        db = settings.DATABASES[alias]
        if db.get("PASSWORD"):
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(db["USER"]), sql.Literal(db["PASSWORD"])
                )
            )
