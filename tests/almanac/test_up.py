"""`manage.py up` supervises the web server and the worker: it refuses a taken address at
once, stops its children when its terminal hangs up, and fails when a child dies."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest
from django.conf import settings
from django.db import connection

from almanac.management.commands.up import check_free, gunicorn_command

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_up(port: int, worker: bool = False) -> subprocess.Popen:
    env = {
        **os.environ,
        "ALMANAC_DB_NAME": connection.settings_dict["NAME"],
        "WEB_WORKERS": "1",
        "Q_WORKERS": "1",
    }
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "up",
            *([] if worker else ["--no-worker"]),
            "--addr",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_serving(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("the web server did not come up")


def gunicorn_master(proc: subprocess.Popen) -> psutil.Process:
    (master,) = [c for c in psutil.Process(proc.pid).children() if "gunicorn" in " ".join(c.cmdline())]
    return master


def test_a_taken_address_is_refused_at_once():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start_up(port)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "already running" in err
    check_free(f"127.0.0.1:{port}")  # and once it is closed, the address is free again


def test_a_hangup_stops_the_web_server():
    port = free_port()
    proc = start_up(port)
    try:
        wait_serving(port, proc)
        master = gunicorn_master(proc)
        proc.send_signal(signal.SIGHUP)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "stopped" in out
    assert not master.is_running() or master.status() == psutil.STATUS_ZOMBIE


def test_a_web_server_that_dies_fails_up():
    port = free_port()
    proc = start_up(port)
    try:
        wait_serving(port, proc)
        gunicorn_master(proc).kill()
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1
    assert "the web server exited" in err


def test_a_worker_killed_outright_leaves_no_processes_behind():
    port = free_port()
    proc = start_up(port, worker=True)
    try:
        wait_serving(port, proc)
        (worker,) = [c for c in psutil.Process(proc.pid).children() if "qcluster" in " ".join(c.cmdline())]
        deadline = time.monotonic() + 30
        while not worker.children(recursive=True) and time.monotonic() < deadline:
            time.sleep(0.2)
        cluster = worker.children(recursive=True)
        worker.kill()  # its cluster and workers are orphans now, still in its process group
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1 and "the worker exited" in err
    assert cluster and all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in cluster)
    # The killed worker signed nothing off: it is no longer counted as a user of the server.
    handles = json.loads((settings.DATA_DIR / "pg" / ".handle_pids.json").read_text() or "[]")
    assert worker.pid not in handles


@pytest.mark.parametrize(
    ("addr", "said"),
    [
        ("127.0.0.1:99999", "the port must be between 1 and 65535"),
        ("no-such-host.invalid:8095", "cannot resolve the host"),
        ("8752", "is no address: give host:port"),  # a port alone
        ("", "is no address: give host:port"),  # ALMANAC_ADDR set empty
    ],
)
def test_an_address_that_cannot_be_is_refused_in_a_line(addr, said):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match=said):
        check_free(addr)


def hello_app(environ, start_response):
    """What the server runs in the test below: its refusals never reach an application."""
    start_response("200 OK", [("Content-Type", "application/json")])
    return [b'{"hello": "world"}']


def raw_request(port: int, request: bytes) -> tuple[str, dict, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return status_line, headers, body


def test_the_servers_own_refusals_are_json():
    """The web server `up` starts (its very arguments) answers what it refuses before the
    application sees it, an over-long URL or header, in the API's JSON (docs/api.md)."""
    port = free_port()
    command = gunicorn_command(f"127.0.0.1:{port}", app="tests.almanac.test_up:hello_app")
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/", timeout=2).json() == {"hello": "world"}
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        long_url = b"GET /api/v1/memories?q=" + b"x" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        big_header = b"GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * 100_000 + b"\r\n\r\n"
        many_headers = b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n"
        for request, status in ((long_url, "414"), (big_header, "431"), (many_headers, "431")):
            status_line, headers, body = raw_request(port, request)
            assert status_line.split()[1] == status, status_line
            assert headers["content-type"] == "application/json"
            assert int(headers["content-length"]) == len(body)
            assert json.loads(body)["detail"]
        # A URL within the limit reaches the application.
        ok_url = b"GET /?q=" + b"x" * 8000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        assert raw_request(port, ok_url)[0].split()[1] == "200"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
