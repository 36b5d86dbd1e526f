"""End-to-end benchmark of `POST /api/v1/context` over HTTP, no LLM.

    ALMANAC_DB_NAME=almanac_bench_ctx .venv/bin/python bench/context/generate.py   # once
    ALMANAC_DB_NAME=almanac_bench_ctx .venv/bin/python bench/context/run.py --clients 8 --requests 800
    ALMANAC_DB_NAME=almanac_bench_ctx .venv/bin/python bench/context/run.py --rate 20 --clients 16 --requests 600

1. a live server on 127.0.0.1: gunicorn (`--workers 2 --threads 4`, gthread) when it is
   installed, else `manage.py runserver --noreload` (threaded, one process); DEBUG off;
2. an agent key for the bench tenant; tasks drawn at random from customer/project/person
   templates in English and Chinese (mostly distinct, so the query embedding is computed
   on the request path), acting for random users of the tenant;
3. `--clients` threads, each with its own httpx.Client (keep-alive), after a warm-up, each
   sending its next call as soon as the last one is answered (closed loop: the server's
   saturation). With `--rate R` the calls arrive at R per second instead (open loop, Poisson
   arrivals, latency counted from each call's arrival), which is how agents load a
   service: p99 at an offered rate is what sizing needs;
4. latency p50/p95/p99, requests/s, errors, how often pages were summarized, the
   database queries per call (measured in-process with CaptureQueriesContext on the same data),
   and the CPU time per call: all of the machine's busy CPU during the measured phase
   (server, PostgreSQL and this client) over the calls answered (Linux /proc/stat). With
   closed-loop clients, latency is mostly queueing once the cores are busy; the CPU per call
   is what sizing depends on: calls/s per core = 1000 / cpu_ms_per_call. It is also split
   by part (web server processes, the PostgreSQL backends of this database, this client);
   their sum, `own_cpu_ms_per_call`, is the figure to compare when the machine does other
   work at the same time (the whole-machine figure then counts that work too).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_ctx")

TENANT = "benchctx"
TASKS_EN = [
    "Draft the {c} renewal proposal",
    "What is the status of {p} and what is blocking it?",
    "Summarize pricing and discount history for {c}",
    "Prepare for the {c} call about {p} next week",
    "Any open incidents or latency issues for {c}?",
    "Write the weekly update for {p}",
]
TASKS_ZH = [
    "为 {c} 起草续约提案",
    "{p} 项目进展如何，有什么风险？",
    "总结 {c} 的报价和折扣历史",
    "准备和 {c} 关于 {p} 的会议",
]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_tasks(n: int, seed: int) -> list[str]:
    from bench.wiki.generate import CUSTOMERS, PROJECTS

    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        template = rng.choice(TASKS_ZH if rng.random() < 0.35 else TASKS_EN)
        task = template.format(c=rng.choice(CUSTOMERS), p=rng.choice(PROJECTS))
        tasks.append(f"{task} (#{i})" if rng.random() < 0.7 else task)  # most tasks distinct
    return tasks


def start_server(
    port: int, server: str, workers: int, threads: int, worker_class: str = "gthread"
) -> tuple[subprocess.Popen, str]:
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "OPENBLAS_NUM_THREADS": "1",
    }
    gunicorn = shutil.which("gunicorn", path=str(ROOT / ".venv" / "bin")) or shutil.which("gunicorn")
    if server == "gunicorn" and gunicorn:
        cmd = [
            gunicorn, "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--threads", str(threads), "--worker-class", worker_class, "--log-level", "warning", "--timeout", "120",
        ]  # fmt: skip
        label = f"gunicorn {worker_class}, {workers} workers" + (
            f" x {threads} threads" if worker_class == "gthread" else ""
        )
    else:
        cmd = [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
        label = "manage.py runserver --noreload (threaded, 1 process)"
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    import httpx

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=2).status_code == 200:
                return proc, label
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"server did not start: {proc.stderr.read().decode()[-2000:]}")


def cpu_times() -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine since boot, or None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq) / ticks, sum(fields) / ticks


def cpu_by_part(server: subprocess.Popen) -> dict:
    """CPU seconds so far of the web server (its processes), of each PostgreSQL backend
    connected to this database ({pid: seconds}: the cluster's other databases may be busy
    with other work on a shared machine) and of this client."""
    import psutil
    from django.db import connection

    def used(pid: int) -> float:
        try:
            times = psutil.Process(pid).cpu_times()
            return times.user + times.system
        except psutil.Error:
            return 0.0

    web = psutil.Process(server.pid)
    parts: dict = {"web": used(web.pid) + sum(used(p.pid) for p in web.children(recursive=True))}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        parts["postgres"] = {pid: used(pid) for (pid,) in cursor.fetchall()}
    parts["client"] = used(os.getpid())
    return parts


def cpu_spent(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds per part between two `cpu_by_part` readings (a backend that started in
    between counts whole)."""
    spent = {part: after[part] - before[part] for part in ("web", "client")}
    spent["postgres"] = sum(s - before["postgres"].get(pid, 0.0) for pid, s in after["postgres"].items())
    return spent


def mcp_context(client, arguments: dict):
    """The same call as an MCP client makes it: `tools/call context` on /mcp (docs/agents.md,
    MCP). The response's structured content is the API's context response."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    message["params"] = {"name": "context", "arguments": arguments}
    return client.post("/mcp", json=message, headers={"Accept": "application/json, text/event-stream"})


def call(client, user: str, task: str, max_tokens: int, since: float, out: list, errors: list, mcp=False):
    """One context call (with `mcp`, through the MCP server); its latency (ms since `since`)
    and what came back go to `out`."""
    arguments = {"user": user, "task": task, "max_tokens": max_tokens}
    response = mcp_context(client, arguments) if mcp else client.post("/api/v1/context", json=arguments)
    elapsed = (time.perf_counter() - since) * 1000
    if response.status_code != 200:
        errors.append((response.status_code, response.text[:200]))
        return
    data = response.json()
    if mcp:
        result = data.get("result") or {}
        if result.get("isError") or "structuredContent" not in result:
            errors.append((200, str(data)[:200]))
            return
        data = result["structuredContent"]
    summarized = any(i["summarized"] for b in data["blocks"] for i in b["items"])
    out.append((elapsed, summarized, data["budget"]["used"], len(data["blocks"]), mcp))


def client_loop(base: str, key: str, jobs: list, max_tokens: int, out: list, errors: list, mcp=False):
    """Each client's calls in turn; with `mcp`, every other one through the MCP server."""
    import httpx

    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        for i, (user, task) in enumerate(jobs):
            call(client, user, task, max_tokens, time.perf_counter(), out, errors, mcp and i % 2 == 1)


def run_load(
    base: str,
    key: str,
    users: list[str],
    tasks: list[str],
    clients: int,
    per_client: int,
    max_tokens: int,
    seed: int,
    mcp: bool = False,
):
    rng = random.Random(seed)
    results: list = []
    errors: list = []
    jobs = [[(rng.choice(users), rng.choice(tasks)) for _ in range(per_client)] for _ in range(clients)]
    threads = [
        threading.Thread(target=client_loop, args=(base, key, job, max_tokens, results, errors, mcp))
        for job in jobs
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    return results, errors, wall


def run_open(
    base: str,
    key: str,
    users: list[str],
    tasks: list[str],
    rate: float,
    total: int,
    max_tokens: int,
    seed: int,
    senders: int,
):
    """Open loop: `total` calls arriving at `rate` per second (Poisson), whatever the server's
    pace. Latency counts from each call's scheduled arrival, so time spent waiting for a free
    sender is counted too (no coordinated omission). `senders` threads send them."""
    import queue

    rng = random.Random(seed)
    results: list = []
    errors: list = []
    arrivals = queue.SimpleQueue()
    gaps = [rng.expovariate(rate) for _ in range(total)]
    jobs = [(rng.choice(users), rng.choice(tasks)) for _ in range(total)]
    # Senders build their clients before the clock starts (an httpx.Client costs a few ms
    # of CPU: 16 of them at once had the first half-second's calls wait for the client).
    ready = threading.Barrier(senders + 1)

    def sender() -> None:
        import httpx

        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            ready.wait()
            while True:
                job = arrivals.get()
                if job is None:
                    return
                due, user, task = job
                time.sleep(max(0.0, due - time.perf_counter()))
                call(client, user, task, max_tokens, due, results, errors)

    threads = [threading.Thread(target=sender) for _ in range(senders)]
    for t in threads:
        t.start()
    ready.wait()
    started = due = time.perf_counter()
    for gap, (user, task) in zip(gaps, jobs, strict=True):
        due += gap
        arrivals.put((due, user, task))  # the next free sender takes it and waits for its time
    for _ in threads:
        arrivals.put(None)
    for t in threads:
        t.join()
    return results, errors, time.perf_counter() - started


def query_counts(users: list[str], tasks: list[str], key: str, n: int = 20) -> list[int]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    counts = []
    for i in range(n):
        body = {"user": users[i % len(users)], "task": tasks[i % len(tasks)]}
        with CaptureQueriesContext(connection) as ctx:
            response = client.post(
                "/api/v1/context",
                body,
                content_type="application/json",
                headers={"Authorization": f"Bearer {key}"},
            )
        assert response.status_code == 200, response.content
        counts.append(len(ctx.captured_queries))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description="POST /context over HTTP")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=800, help="total measured requests")
    parser.add_argument("--warmup", type=int, default=80)
    parser.add_argument("--max-tokens", type=int, default=3000)
    parser.add_argument("--server", choices=["gunicorn", "runserver"], default="gunicorn")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--worker-class", choices=["gthread", "sync"], default="gthread")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rate",
        type=float,
        help="open loop: calls arrive at this many per second (Poisson) instead of --clients "
        "closed-loop clients sending back to back; --clients is then the number of senders",
    )
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="then the same calls as MCP `tools/call context` on /mcp, against the same server: "
        "the protocol's overhead beside POST /context",
    )
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()

    import logging

    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from django.contrib.auth import get_user_model

    from almanac.models import Tenant
    from almanac.services.keys import agentkey_create
    from memories.models import Memory
    from wiki.models import PageSection

    tenant = Tenant.objects.get(slug=TENANT)
    sections = PageSection.objects.filter(tenant=tenant).count()
    memories = Memory.objects.filter(tenant=tenant).count()
    users = list(get_user_model().objects.filter(profile__tenant=tenant).values_list("username", flat=True))
    key = agentkey_create(tenant=tenant, name=f"bench-{int(time.time())}", rate_limit="1000000/m")[1]
    tasks = make_tasks(2000, args.seed)
    counts = query_counts(users, tasks, key)

    port = free_port()
    proc, label = start_server(port, args.server, args.workers, args.threads, args.worker_class)
    base = f"http://127.0.0.1:{port}"
    try:
        per_client = max(1, args.warmup // args.clients)
        run_load(base, key, users, tasks, args.clients, per_client, args.max_tokens, args.seed + 1)
        per_client = max(1, args.requests // args.clients)
        cpu_before, parts_before = cpu_times(), cpu_by_part(proc)
        if args.rate:
            results, errors, wall = run_open(
                base,
                key,
                users,
                tasks,
                args.rate,
                args.requests,
                args.max_tokens,
                args.seed + 2,
                args.clients,
            )
        else:
            results, errors, wall = run_load(
                base, key, users, tasks, args.clients, per_client, args.max_tokens, args.seed + 2
            )
        cpu_after, parts_after = cpu_times(), cpu_by_part(proc)
        if args.mcp:  # one more load, each client's calls alternating POST /context and MCP
            mixed = run_load(
                base, key, users, tasks, args.clients, per_client, args.max_tokens, args.seed + 3, mcp=True
            )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    latencies = [r[0] for r in results]
    report = {
        "server": label,
        "corpus": {"sections": sections, "memories": memories, "users": len(users)},
        "load": f"open loop, {args.rate:g} calls/s offered, {args.clients} senders"
        if args.rate
        else f"closed loop, {args.clients} clients back to back",
        "clients": args.clients,
        "max_tokens": args.max_tokens,
        "requests": len(results),
        "errors": len(errors),
        "p50_ms": round(pct(latencies, 0.50), 1),
        "p95_ms": round(pct(latencies, 0.95), 1),
        "p99_ms": round(pct(latencies, 0.99), 1),
        "mean_ms": round(statistics.mean(latencies), 1),
        "requests_per_s": round(len(results) / wall, 1),
        "summarized_share": round(sum(1 for r in results if r[1]) / max(len(results), 1), 3),
        "mean_used_tokens": round(statistics.mean(r[2] for r in results), 0),
        "queries_per_call": {"min": min(counts), "median": statistics.median(counts), "max": max(counts)},
    }
    if cpu_before and cpu_after and results:
        busy = cpu_after[0] - cpu_before[0]
        report["cpu_ms_per_call"] = round(busy / len(results) * 1000, 1)
        report["cores_busy"] = round(busy / wall, 2)
        report["cores"] = os.cpu_count()
        spent = cpu_spent(parts_before, parts_after)
        report["cpu_ms_per_call_by_part"] = {
            part: round(seconds / len(results) * 1000, 1) for part, seconds in spent.items()
        }
        # This run's own processes only: the figure to compare on a machine doing other work.
        report["own_cpu_ms_per_call"] = round(sum(spent.values()) / len(results) * 1000, 1)
    if args.mcp:
        mixed_results, mixed_errors, _ = mixed
        by = {p: [r[0] for r in mixed_results if r[4] == p] or [0.0] for p in (False, True)}
        report["mcp"] = {
            "load": "the same load again, each client's calls alternating POST /context and MCP",
            "requests": len(mixed_results),
            "errors": len(mixed_errors),
            "api_p50_ms": round(pct(by[False], 0.50), 1),
            "mcp_p50_ms": round(pct(by[True], 0.50), 1),
            "mcp_p95_ms": round(pct(by[True], 0.95), 1),
            "p50_over_api_ms": round(pct(by[True], 0.50) - pct(by[False], 0.50), 1),
        }
        errors += mixed_errors
    if errors:
        report["first_errors"] = errors[:3]
    print(json.dumps(report, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
