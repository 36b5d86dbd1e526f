import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Migrate, then run the django-q2 cluster and the web server together (Ctrl-C stops both)."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default=os.environ.get("ALMANAC_ADDR", "127.0.0.1:8000"))
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, addr, no_worker, **options):
        call_command("migrate", interactive=False, verbosity=0)
        call_command("setup_schedules", verbosity=0)
        manage = [sys.executable, "manage.py"]
        procs = []
        if not no_worker:
            procs.append(subprocess.Popen([*manage, "qcluster"], start_new_session=True))
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "almanac.wsgi:application",
                    "--bind",
                    addr,
                    "--workers",
                    str(settings.WEB_WORKERS),
                    "--threads",
                    str(settings.WEB_THREADS),
                    "--access-logfile",
                    "-",
                    "--graceful-timeout",
                    "10",
                ],
                start_new_session=True,
            )
        )
        self.stdout.write(f"Almanac on http://{addr}/  (admin /admin/, API docs /api/v1/docs) — Ctrl-C stops")
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while not stopping and all(p.poll() is None for p in procs):
            time.sleep(0.5)
        # Children run in their own sessions, so a terminal Ctrl-C reaches only us and each
        # child gets exactly one SIGTERM (a second signal deadlocks django-q2's shutdown).
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        self.stdout.write("stopped")
