"""What the audit log's hash chain costs an insert: chained inserts into `almanac_auditevent`
against the same inserts into a plain copy of the table (no triggers, no chain lock).

    ALMANAC_DB_NAME=almanac_bench_audit .venv/bin/python bench/almanac/audit_chain.py --per-writer 500

Each writer is its own connection as the runtime role and commits every insert (the worst
case: an audit event per transaction). Runs: 1 writer; 4 writers to one tenant (one chain:
they queue on its lock, held until each commit); 4 writers to 4 tenants (4 chains). The
plain copy is created and dropped by the owner; the chained rows stay (tenant ids beyond
any real tenant's: 10^12 + n).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_audit")

INSERT = (
    "INSERT INTO {table} (tenant_id, actor, action, object_type, object_id, detail)"
    " VALUES (%s, 'bench', 'bench.insert', 'memory', %s, '{{\"fields\": [\"content\"]}}')"
)
TENANT = 10**12


def rate(info: dict, table: str, writers: int, per_writer: int, tenant_of) -> float:
    import psycopg

    def work(i: int) -> None:
        with psycopg.connect(**info) as conn:
            for j in range(per_writer):
                with conn.transaction():
                    conn.execute(INSERT.format(table=table), [tenant_of(i), str(j)])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(writers)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return writers * per_writer / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-writer", type=int, default=500)
    args = parser.parse_args()
    import django

    django.setup()
    import psycopg
    from django.conf import settings
    from django.core.management import call_command

    from almanac.pgtools import conninfo

    call_command("migrate", verbosity=0)
    runtime = conninfo(role="runtime")
    owner = {**conninfo(), "user": settings.DATABASES["owner"]["USER"]}
    with psycopg.connect(**owner, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_audit_plain")
        conn.execute(
            "CREATE TABLE bench_audit_plain (LIKE almanac_auditevent INCLUDING DEFAULTS INCLUDING IDENTITY)"
        )
        conn.execute("CREATE INDEX ON bench_audit_plain (tenant_id, created_at)")
        conn.execute(f'GRANT INSERT, SELECT ON bench_audit_plain TO "{runtime["user"]}"')
    try:
        runs = [
            ("1 writer", 1, lambda i: TENANT),
            ("4 writers, one tenant", 4, lambda i: TENANT),
            ("4 writers, 4 tenants", 4, lambda i: TENANT + 1 + i),
        ]
        for label, writers, tenant_of in runs:
            plain = rate(runtime, "bench_audit_plain", writers, args.per_writer, tenant_of)
            chained = rate(runtime, "almanac_auditevent", writers, args.per_writer, tenant_of)
            print(f"{label:24} plain {plain:7.0f}/s  chained {chained:7.0f}/s  ({chained / plain:.0%})")
    finally:
        with psycopg.connect(**owner, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS bench_audit_plain")


if __name__ == "__main__":
    main()
