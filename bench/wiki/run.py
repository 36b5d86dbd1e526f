"""Wiki compile benchmark: events/s from inbox to searchable sections, and push→searchable delay.

    DATABASE_AS_OWNER=1 ALMANAC_DB_NAME=almanac_bench_wiki .venv/bin/python bench/wiki/run.py --events 10000 --fast-ingest

1. a fresh tenant with 24 users; `generate` mixed events (Slack/e-mail/GitHub/calendar/
   notes, public and private, edits/deletes/recalls/closes, en+zh);
2. ingest them into the inbox (compile tasks not enqueued), then time `compile_pending`
   (batches of 500 events, what the sweep, `wiki_compile`, imports with `--compile` and
   rebuilds use: each thread rebuilt once per batch) → events/s;
3. push N more events one at a time: ingest + the drain of the inbox the live path runs
   (`inbox_drain`) → delay until its
   section is committed and searchable (p50/p99), checked with `section_search`;
4. `section_search` latency over the filled wiki (p50/p99), after an ANALYZE of the sections
   (as the owner: DATABASE_AS_OWNER=1; else autovacuum's, which may not have run yet).
Summaries are switched off (they are a separate async task, not on the searchable path).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_wiki")


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _fresh_tenant(slug: str):
    from almanac.models import Tenant
    from almanac.services.tenancy import tenant_create

    Tenant.objects.filter(slug=slug).delete()
    return tenant_create(slug=slug, name=slug)[0]


def _push_delays(tenant, users, n: int, seed: int) -> list[float]:
    from bench.wiki.generate import generate, no_compile_enqueue
    from connectors.models import Event
    from connectors.services.ingest import event_ingest
    from wiki.models import PageSection
    from wiki.search import section_search
    from wiki.services.backlog import inbox_drain

    delays = []
    reader = users[0]
    for payload in generate(tenant, n, seed=seed):
        payload["external_id"] = "late-" + payload["external_id"]
        payload["thread_key"] = "late-" + payload["thread_key"]
        payload["occurred_at"] = "2027-06-01T00:00:00+00:00"
        payload["version"] = 1
        payload["kind"] = "message" if payload["kind"].startswith("message") else payload["kind"]
        if payload["kind"] in {"email_recalled", "issue_closed"}:
            payload["kind"] = "email" if payload["kind"] == "email_recalled" else "issue"
        start = time.perf_counter()
        with no_compile_enqueue():  # the drain runs here, timed
            event, _ = event_ingest(tenant=tenant, payload=payload)
        inbox_drain(tenant_id=tenant.pk)
        delays.append(time.perf_counter() - start)
        assert Event.objects.get(pk=event.id).state == "compiled"
    assert PageSection.objects.filter(tenant=tenant, thread_key__startswith="late-").exists()
    assert section_search(user=reader, query="renewal pricing") is not None
    return delays


def _search_latency(users, n: int) -> list[float]:
    from wiki.search import section_search

    queries = [
        "Vercel renewal pricing",
        "华为 续约 风险",
        "Apollo milestone slipped",
        "invoice overdue",
        "单点登录",
    ]
    times = []
    for i in range(n):
        start = time.perf_counter()
        section_search(user=users[i % len(users)], query=queries[i % len(queries)] + f" {i % 7}")
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--push", type=int, default=200)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fast-ingest", action="store_true", help="bulk-insert the inbox (see generate.ingest)"
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from bench.wiki.generate import ensure_users, generate, ingest
    from connectors.models import Event
    from wiki.models import Page, PageSection
    from wiki.services.backlog import compile_pending

    settings.WIKI_SUMMARY_ENABLED = False
    tenant = _fresh_tenant(f"bench{args.events}")
    users = ensure_users(tenant)
    payloads = generate(tenant, args.events, seed=args.seed)
    start = time.perf_counter()
    ingest(tenant, payloads, fast=args.fast_ingest)
    ingest_s = time.perf_counter() - start
    from almanac.search.embeddings import embed

    embed(["warm up"])
    start = time.perf_counter()
    compiled = compile_pending(tenant=tenant)
    compile_s = time.perf_counter() - start
    failed = Event.objects.filter(tenant=tenant, state="failed").count()
    with connection.cursor() as cursor:  # what autovacuum does after a bulk load, at once (owner only)
        cursor.execute("ANALYZE wiki_pagesection")
    delays = _push_delays(tenant, users, args.push, seed=args.seed + 1)
    searches = _search_latency(users, args.searches)
    result = {
        "events": args.events,
        "compiled": compiled,
        "failed": failed,
        "pages": Page.objects.filter(tenant=tenant).count(),
        "sections": PageSection.objects.filter(tenant=tenant).count(),
        "ingest_events_per_s": round(args.events / ingest_s, 1),
        "compile_seconds": round(compile_s, 1),
        "compile_events_per_s": round(compiled / compile_s, 1),
        "push_to_searchable_ms": {
            "p50": round(_pct(delays, 0.5) * 1000, 1),
            "p99": round(_pct(delays, 0.99) * 1000, 1),
            "mean": round(statistics.mean(delays) * 1000, 1),
            "n": len(delays),
        },
        "section_search_ms": {
            "p50": round(_pct(searches, 0.5) * 1000, 1),
            "p99": round(_pct(searches, 0.99) * 1000, 1),
            "n": len(searches),
        },
        "cpus": os.cpu_count(),
    }
    out = Path(__file__).parent / f"results-{args.events}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
