"""Connector ingest benchmark: events/s through `event_ingest_batch` (the push endpoint's
service), re-push of the same events (all duplicates), and the HTTP push endpoint.

    ALMANAC_DB_NAME=almanac_bench_connectors .venv/bin/python bench/connector_ingest.py --events 10000

Mixed events from `bench.wiki.generate` (Slack/e-mail/GitHub/calendar/notes, members on
every content event, en+zh). The compile enqueue is the real django-q2 ORM broker insert
(one queue row per new event, after commit). Results go to bench/connector_ingest-results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_connectors")


def _fresh_tenant(slug: str):
    from almanac.models import Tenant
    from almanac.services.tenancy import tenant_create

    Tenant.objects.filter(slug=slug).delete()
    return tenant_create(slug=slug, name=slug)[0]


def _timed_batches(tenant, payloads, batch: int) -> tuple[float, dict]:
    from connectors.services.ingest import event_ingest_batch

    totals = {"accepted": 0, "duplicates": 0}
    start = time.perf_counter()
    for i in range(0, len(payloads), batch):
        result = event_ingest_batch(tenant=tenant, payloads=payloads[i : i + batch])
        totals["accepted"] += result["accepted"]
        totals["duplicates"] += result["duplicates"]
    return time.perf_counter() - start, totals


def _http_push(tenant, payloads, batch: int) -> float:
    from django.test import Client

    from almanac.services.keys import agentkey_create

    _, raw = agentkey_create(
        tenant=tenant, name=f"bench-{time.time()}", can_push_events=True, rate_limit="1000000/m"
    )
    client = Client()
    start = time.perf_counter()
    for i in range(0, len(payloads), batch):
        response = client.post(
            "/api/v1/connectors/events",
            json.dumps({"events": payloads[i : i + batch]}),
            content_type="application/json",
            headers={"Authorization": f"Bearer {raw}"},
        )
        assert response.status_code == 202, response.content[:300]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--http-events", type=int, default=2000)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django_q.models import OrmQ

    from bench.wiki.generate import ensure_users, generate

    call_command("migrate", verbosity=0)
    tenant = _fresh_tenant("bench-connectors")
    ensure_users(tenant)
    payloads = generate(tenant, args.events, seed=1)
    queued_before = OrmQ.objects.count()
    seconds, totals = _timed_batches(tenant, payloads, args.batch)
    queued = OrmQ.objects.count() - queued_before
    again, dup_totals = _timed_batches(tenant, payloads, args.batch)
    http_payloads = [{**p, "external_id": "http-" + p["external_id"]} for p in payloads[: args.http_events]]
    http_seconds = _http_push(tenant, http_payloads, 100)
    OrmQ.objects.all().delete()  # the bench enqueued compiles nobody will run
    results = {
        "events": args.events,
        "batch": args.batch,
        "ingest_events_per_s": round(args.events / seconds, 1),
        "accepted": totals["accepted"],
        "duplicates_in_first_pass": totals["duplicates"],
        "compile_tasks_enqueued": queued,
        "repush_duplicates_per_s": round(args.events / again, 1),
        "repush": dup_totals,
        "http_events": len(http_payloads),
        "http_push_events_per_s": round(len(http_payloads) / http_seconds, 1),
    }
    print(json.dumps(results, indent=2))
    (ROOT / "bench" / "connector_ingest-results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
