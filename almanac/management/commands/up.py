import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

# What gunicorn reads of a request before Django sees it (docs/operations.md, "Server
# limits"): a request line (method, URL, version) up to 8190 bytes, gunicorn's maximum, so
# that long GET queries fit; at most 100 headers of up to 8190 bytes each. Beyond them the
# worker answers 414 or 431 with the API's JSON error.
SERVER_LIMITS = [
    "--limit-request-line",
    "8190",
    "--limit-request-fields",
    "100",
    "--limit-request-field_size",
    "8190",
]


class Command(BaseCommand):
    help = "Migrate, then run the django-q2 cluster and the web server together (Ctrl-C stops both)."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default=settings.ALMANAC_ADDR)
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, addr, no_worker, **options):
        check_free(addr)
        roles = settings.DATABASE_ROLES
        if roles["runtime"] == roles["owner"]:
            self.stderr.write(
                f"warning: the app connects as {roles['owner'] or 'the database owner'}, who may rewrite the "
                "audit log: set DATABASE_OWNER_URL and run `manage.py db_roles` (docs/operations.md, "
                '"Database roles")'
            )
        # As the owner role; the web server and the worker then connect as the runtime role.
        call_command("migrate", interactive=False, verbosity=0)
        call_command("setup_schedules", verbosity=0)
        # The children's Prometheus values (docs/operations.md, "Metrics"): the last run's go.
        shutil.rmtree(settings.METRICS_DIR, ignore_errors=True)
        settings.METRICS_DIR.mkdir(parents=True)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(settings.METRICS_DIR)
        manage = [sys.executable, "manage.py"]
        procs = {}
        if not no_worker:
            procs["worker"] = subprocess.Popen([*manage, "qcluster"], start_new_session=True)
        procs["web server"] = subprocess.Popen(gunicorn_command(addr), start_new_session=True)
        self.stdout.write(f"Almanac on http://{addr}/  (admin /admin/, API docs /api/v1/docs) — Ctrl-C stops")
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # HUP: the terminal closed
            signal.signal(signum, stop)
        while not stopping and all(p.poll() is None for p in procs.values()):
            time.sleep(0.5)
        failed = {name: p.returncode for name, p in procs.items() if p.poll() is not None}
        # Children run in their own sessions, so a terminal Ctrl-C reaches only us and each
        # child gets exactly one SIGTERM (a second signal deadlocks django-q2's shutdown).
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()  # reaped: a zombie leader would keep its group "alive" below
        for p in procs.values():
            stop_group(p.pid)  # what a child that died (or was killed) left behind
        if not settings.DATABASE_URL:
            # A child killed outright never signed off the embedded server: forget it, so
            # that this process, the last one, stops the server as it exits.
            from almanac.embedded_pg import forget_dead_users

            forget_dead_users(settings.DATA_DIR / "pg")
        if failed and not stopping:
            what = ", ".join(f"the {name} exited ({code})" for name, code in failed.items())
            raise CommandError(f"{what}; stopped the rest")
        self.stdout.write("stopped")


def gunicorn_command(addr: str, app: str = "") -> list[str]:
    """The web server's command line; `app` ("module:attribute") defaults to the project's
    WSGI_APPLICATION."""
    module, _, attribute = settings.WSGI_APPLICATION.rpartition(".")
    return [
        sys.executable,
        "-m",
        "gunicorn",
        app or f"{module}:{attribute}",
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
        *SERVER_LIMITS,
        "--worker-class",  # its own refusals (414, 431, 400) in the API's JSON
        "almanac.gunicorn_worker.JsonErrorWorker",
        "--no-control-socket",  # one per user by default: a second instance would take it over
    ]


def stop_group(pgid: int, grace: float = 10.0) -> None:
    """Stop what is left of a child's process group (each child leads its own session): a
    worker killed outright leaves its cluster and worker processes running otherwise, and
    a restart would then run two clusters."""
    for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(pgid, signum)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.1)


def check_free(addr: str) -> None:
    """Refuse at once, before migrating, when something (another Almanac?) listens on addr."""
    if addr.startswith("unix:"):
        return  # a unix socket: gunicorn judges it
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise CommandError(f"{addr!r} is no address: give host:port, e.g. 127.0.0.1:8000 or 0.0.0.0:8000")
    if not 0 < int(port) < 65536:
        raise CommandError(f"{addr}: the port must be between 1 and 65535")
    try:
        socket.getaddrinfo(host.strip("[]") or "0.0.0.0", int(port))  # noqa: S104 - a lookup only
    except socket.gaierror as exc:
        raise CommandError(f"{addr}: cannot resolve the host {host!r} ({exc.strerror})") from exc
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]") or "0.0.0.0", int(port)))  # noqa: S104 - a probe, closed at once
        except OSError as exc:
            raise CommandError(
                f"cannot listen on {addr} ({exc.strerror}): is Almanac already running? "
                "Stop it, or pass --addr / set ALMANAC_ADDR to another host:port"
            ) from exc
