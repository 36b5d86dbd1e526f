"""Wiki burst benchmark: does the live path keep up with a burst of pushed events?

    ALMANAC_DB_NAME=almanac_bench_burst .venv/bin/python bench/wiki/burst.py --events 1500

1. a fresh tenant with 24 users; `generate` mixed events (as `bench/wiki/run.py`);
2. start the real worker (`manage.py qcluster`, its configured workers, summaries on, no
   schedules: the sweep does not help);
3. push the events one at a time, each in its own transaction, as a webhook or a poller
   does (`event_ingest`: its commit enqueues what the wiki's receiver enqueues);
4. sample the queue (django-q2's broker rows) and the inbox (pending events) twice a second
   until the inbox is empty and the queue idle.

Reports: push seconds, drain seconds (last push → no pending event), idle seconds (last
push → queue empty), the largest queue, the most copies of one task (func and arguments) in
the queue at once, and that every event was compiled and none failed.
`--no-worker` runs no worker: what one burst enqueues, nothing more.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_burst")


def queue_copies() -> tuple[int, int, str]:
    """(tasks in the queue, most copies of one task: same func and arguments, that task's func)."""
    from django_q.models import OrmQ
    from django_q.signing import SignedPackage

    copies: Counter = Counter()
    for payload in OrmQ.objects.values_list("payload", flat=True):
        task = SignedPackage.loads(payload)
        copies[(task["func"], repr(task["args"]))] += 1
    (func, _), most = copies.most_common(1)[0] if copies else (("", ""), 0)
    return sum(copies.values()), most, func


class Sampler(threading.Thread):
    """Samples the queue and the inbox of `tenant` until stopped."""

    def __init__(self, tenant, period: float = 0.5):
        super().__init__(daemon=True)
        self.tenant, self.period = tenant, period
        self.stop = threading.Event()
        self.samples: list[dict] = []

    def run(self) -> None:
        from django.db import connection

        from connectors.models import Event

        start = time.perf_counter()
        try:
            while not self.stop.is_set():
                size, copies, func = queue_copies()
                pending = Event.objects.filter(tenant=self.tenant, state="pending").count()
                self.samples.append(
                    {
                        "t": time.perf_counter() - start,
                        "queue": size,
                        "copies": copies,
                        "func": func,
                        "pending": pending,
                    }
                )
                self.stop.wait(self.period)
        finally:
            connection.close()


def push(tenant, payloads: list[dict]) -> None:
    """One event per transaction, as a webhook delivery is stored."""
    from connectors.services.ingest import event_ingest

    for payload in payloads:
        event_ingest(tenant=tenant, payload=payload)


def worker_start() -> subprocess.Popen:
    env = {**os.environ, "Q_SYNC": "0"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "qcluster"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def worker_stop(worker: subprocess.Popen) -> None:
    os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)


def burst(tenant, payloads: list[dict], *, worker: bool, timeout: float) -> dict:
    """Push the burst (with the worker running, if `worker`) and measure until it is drained."""
    from connectors.models import Event

    sampler = Sampler(tenant)
    sampler.start()
    start = time.perf_counter()
    push(tenant, payloads)
    pushed_at = time.perf_counter()
    drained = idle = None
    while worker and time.perf_counter() - pushed_at < timeout:
        last = sampler.samples[-1] if sampler.samples else None
        if last and last["t"] > pushed_at - start:
            if drained is None and last["pending"] == 0:
                drained = time.perf_counter() - pushed_at
            if drained is not None and last["queue"] == 0:
                idle = time.perf_counter() - pushed_at
                break
        time.sleep(0.2)
    time.sleep(sampler.period * 2)
    sampler.stop.set()
    sampler.join()
    after = [s for s in sampler.samples if s["t"] >= pushed_at - start]
    states = Counter(Event.objects.filter(tenant=tenant).values_list("state", flat=True))
    return {
        "events": len(payloads),
        "push_seconds": round(pushed_at - start, 1),
        "drain_seconds_after_last_push": None if drained is None else round(drained, 1),
        "queue_idle_seconds_after_last_push": None if idle is None else round(idle, 1),
        "max_queue": max((s["queue"] for s in sampler.samples), default=0),
        "max_copies_of_one_task": max((s["copies"] for s in sampler.samples), default=0),
        "most_copied_task": max(sampler.samples, key=lambda s: s["copies"])["func"]
        if sampler.samples
        else "",
        "pending_at_last_push": after[0]["pending"] if after else None,
        "events_by_state": dict(states),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the drain")
    parser.add_argument("--no-worker", action="store_true", help="push only: what the burst enqueues")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django_q.models import OrmQ

    call_command("migrate", verbosity=0)
    logging.getLogger("django-q").setLevel(logging.WARNING)  # not a line per task enqueued
    from bench.wiki.generate import ensure_users, generate
    from bench.wiki.run import _fresh_tenant

    tenant = _fresh_tenant(f"burst{args.events}")
    ensure_users(tenant)
    payloads = generate(tenant, args.events, seed=args.seed)
    OrmQ.objects.all().delete()
    worker = None if args.no_worker else worker_start()
    try:
        if worker:
            time.sleep(5)  # the cluster's processes start (the embedding model loads on first use)
        result = burst(tenant, payloads, worker=worker is not None, timeout=args.timeout)
    finally:
        if worker:
            worker_stop(worker)
    result["workers"] = None if worker is None else "qcluster"
    result["cpus"] = os.cpu_count()
    out = Path(__file__).parent / f"results-burst-{args.events}.json"
    if worker:
        out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
