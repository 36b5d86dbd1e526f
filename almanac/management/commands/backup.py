import subprocess
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from almanac.pgtools import libpq_env, pg_tool


class Command(BaseCommand):
    help = "Dump the whole database (rows, inbox, queue, history, vectors) with pg_dump -Fc."

    def add_arguments(self, parser):
        parser.add_argument("output", help="file to write, e.g. almanac.dump")

    def handle(self, output, **options):
        result = subprocess.run(
            [pg_tool("pg_dump"), "-Fc", "--no-owner", "--no-privileges", "-f", output],
            env=libpq_env(),
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise CommandError(result.stderr.strip())
        self.stdout.write(
            f"wrote {output} ({Path(output).stat().st_size} bytes); restore with: manage.py restore {output}"
        )
