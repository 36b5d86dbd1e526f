"""`migrate` as the owner role, then the runtime role's grants (docs/operations.md,
"Database roles").

The app connects as the runtime role, which may not create or alter tables. For the length
of `migrate`, the `default` connection logs in as the owner role instead (the credentials
of DATABASES["owner"]): one connection, so a data migration or a post_migrate hook that
reads through `default` sees the schema changes of the migration it runs in. Afterwards the
runtime role gets its privileges on what the migrations created (tables, sequences, default
privileges for later ones; INSERT and SELECT only on the audit log): idempotent, so every
`migrate` also repairs grants that a restore or a hand-made change lost."""

from django.conf import settings
from django.core.management.commands.migrate import Command as MigrateCommand
from django.db import connections

from almanac.pgtools import connected_as_owner, runtime_grant


class Command(MigrateCommand):
    help = f"{MigrateCommand.help} Runs as the owner role; then grants the runtime role its privileges."

    def handle(self, *args, **options):
        if not settings.DATABASE_URL:
            # What a restore (or an older install) left owned by the superuser goes to the owner.
            from almanac import embedded_pg

            server = embedded_pg.ensure_server(settings.DATA_DIR / "pg")
            embedded_pg.prepare_database(server, connections[options["database"]].settings_dict["NAME"])
        with connected_as_owner(options["database"]) as connection:
            super().handle(*args, **options)
            roles = settings.DATABASE_ROLES
            if roles["runtime"] and roles["owner"] and roles["runtime"] != roles["owner"]:
                runtime_grant(connection, owner=roles["owner"], runtime=roles["runtime"])
