"""What recall hit counting costs the database: batches of `memory_touch_counts` on a
loaded memory table, as the touch buffer writes them.

    ALMANAC_DB_NAME=almanac_bench_ctx .venv/bin/python bench/memories/touch.py --batches 60 --size 500

Every recall bumps `access_count`/`last_access` of its hits (memories/services/touches.py flushes
one UPDATE per process every MEMORY_TOUCH_FLUSH_SECONDS). Whether such an update is HOT
(a new row version on the same heap page, no index entries) or not (a new entry in every
index, the HNSW graph included) depends on free space in the page, i.e. on the table's
fillfactor. This reports, for `--batches` UPDATEs of `--size` random memories of the
tenant (committed, as in production):

- wall and PostgreSQL backend CPU per batch and per row (psutil on the backend process,
  when the database runs on this host);
- the share of HOT updates (pg_stat_user_tables, before/after);
- how much each index grew (new entries of non-HOT updates; dead ones wait for VACUUM);
- the table's fillfactor.

It changes the memories' hit counts and access times (as recalls would); nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_ctx")


def table_state(cursor, table: str) -> dict:
    cursor.execute("SELECT pg_stat_clear_snapshot()")
    cursor.execute(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = %s",
        [table],
    )
    updates, hot = cursor.fetchone()
    cursor.execute(
        """SELECT c.relname, pg_relation_size(c.oid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE i.indrelid = %s::regclass ORDER BY c.relname""",
        [table],
    )
    indexes = dict(cursor.fetchall())
    cursor.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass", [table])
    options = cursor.fetchone()[0] or []
    fillfactor = next((int(o.split("=")[1]) for o in options if o.startswith("fillfactor=")), 100)
    return {"updates": updates, "hot": hot, "indexes": indexes, "fillfactor": fillfactor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenant", default="benchctx")
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--size", type=int, default=500, help="memories per UPDATE")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()

    import django

    django.setup()
    import psutil
    from django.db import connection
    from django.utils import timezone

    from almanac.models import Tenant
    from memories.models import Memory
    from memories.services.touches import memory_touch_counts

    table = Memory._meta.db_table
    tenant = Tenant.objects.get(slug=args.tenant)
    ids = list(Memory.objects.filter(tenant=tenant).values_list("id", flat=True))
    rng = random.Random(args.seed)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
        # The backend's CPU is read from this host's process table: with a DATABASE_URL on
        # another host, only wall times are reported.
        backend = psutil.Process(pid) if psutil.pid_exists(pid) else None
        # Let earlier activity's statistics reach the shared counters first.
        time.sleep(1.5)
        before = table_state(cursor, table)
    walls, cpus = [], []
    for _ in range(args.batches):
        batch = rng.sample(ids, min(args.size, len(ids)))
        now = timezone.now()
        cpu = backend.cpu_times() if backend else None
        started = time.perf_counter()
        memory_touch_counts(counts={pk: (1, now) for pk in batch})  # autocommit: one transaction
        walls.append((time.perf_counter() - started) * 1000)
        if backend:
            after_cpu = backend.cpu_times()
            cpus.append((after_cpu.user + after_cpu.system - cpu.user - cpu.system) * 1000)
    connection.close()  # its statistics are flushed at exit
    time.sleep(1.5)
    with connection.cursor() as cursor:
        after = table_state(cursor, table)
    updates = after["updates"] - before["updates"]
    rows = args.batches * args.size
    report = {
        "memories": len(ids),
        "fillfactor": after["fillfactor"],
        "batches": args.batches,
        "rows_per_batch": args.size,
        "wall_ms_per_batch": round(sum(walls) / len(walls), 1),
        "pg_cpu_ms_per_batch": round(sum(cpus) / len(cpus), 1) if cpus else None,
        "pg_cpu_us_per_row": round(sum(cpus) * 1000 / rows, 1) if cpus else None,
        "updates_counted": updates,
        "hot_share": round((after["hot"] - before["hot"]) / updates, 3) if updates else None,
        "index_growth_kb": {
            name: (after["indexes"][name] - size) // 1024 for name, size in before["indexes"].items()
        },
    }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
