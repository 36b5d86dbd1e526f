import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
from django.db import connection

from almanac import embedded_pg

ROOT = Path(__file__).resolve().parents[2]


def test_a_second_process_joins_the_running_server():
    """This test process uses the server; another process connects to the same one."""
    our_pid = embedded_pg.ensure_server(Path(connection.settings_dict["HOST"])).get_pid()
    code = (
        "import sys; from pathlib import Path; from almanac.embedded_pg import ensure_server; "
        "print(ensure_server(Path(sys.argv[1])).get_pid())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, connection.settings_dict["HOST"]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == our_pid


def _kill_tree(pid):
    """kill -9 the server and its children. Each kill on its own: a child that exits by
    itself while we go (it does, under load) must not stop the others from being killed."""
    try:
        proc = psutil.Process(pid)
        children = proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return  # already gone: its pid files are just as stale
    for victim in [proc, *children]:
        with contextlib.suppress(psutil.NoSuchProcess):
            victim.kill()


START_AND_HANG = (
    "import sys, time; from pathlib import Path; from almanac.embedded_pg import ensure_server; "
    "s = ensure_server(Path(sys.argv[1])); print(s.get_pid(), flush=True); time.sleep(600)"
)


def test_a_killed_run_does_not_block_the_next_start(tmp_path):
    pgdata = tmp_path / "pg"
    # 1. a process starts the server, then it and the server die without any cleanup (kill -9)
    proc = subprocess.Popen(
        [sys.executable, "-c", START_AND_HANG, str(pgdata)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    pg_pid = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _kill_tree(pg_pid)
    deadline = time.monotonic() + 30  # a loaded machine may take a moment to tear it down
    while embedded_pg._alive(pg_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not embedded_pg._alive(pg_pid), f"the killed server is still {psutil.Process(pg_pid).status()}"
    assert (pgdata / "postmaster.pid").exists()
    assert proc.pid in json.loads((pgdata / embedded_pg.HANDLE_FILE).read_text())
    # 2. the next start recovers: new server, stale handles pruned, connections work
    server = embedded_pg.ensure_server(pgdata)
    try:
        assert server.get_pid() != pg_pid
        assert json.loads((pgdata / embedded_pg.HANDLE_FILE).read_text()) == [os.getpid()]
        with psycopg.connect(host=embedded_pg.socket_dir(server), dbname="postgres", user="postgres") as conn:
            assert conn.execute("select 1").fetchone() == (1,)
    finally:
        # 3. we are the last user, so cleanup stops the server (it would not with stale pids left)
        server._cleanup()
    assert not psutil.pid_exists(server.get_pid()) or psutil.Process(server.get_pid()).status() == "zombie"


def test_server_settings_are_applied_and_rewritten_at_start(tmp_path):
    pgdata = tmp_path / "pg"
    server = embedded_pg.ensure_server(pgdata, {"shared_buffers": "48MB", "random_page_cost": "1.5"})
    try:
        with psycopg.connect(host=embedded_pg.socket_dir(server), dbname="postgres", user="postgres") as conn:
            assert conn.execute("show shared_buffers").fetchone() == ("48MB",)
            assert conn.execute("show random_page_cost").fetchone() == ("1.5",)
    finally:
        server._cleanup()
    # a changed setting replaces the old file; postgresql.conf includes it exactly once
    embedded_pg.write_tuning(pgdata, {"shared_buffers": "40MB"})
    assert (pgdata / embedded_pg.TUNING_FILE).read_text().splitlines()[1:] == ["shared_buffers = '40MB'"]
    assert (pgdata / "postgresql.conf").read_text().count(embedded_pg.INCLUDE_LINE) == 1
