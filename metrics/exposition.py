"""The database's figures as Prometheus gauges, read at scrape time (docs/operations.md, "Metrics").

A scrape reads the rollup's rows (`DailyFigure`) of the last days only: a few hundred rows
whatever the data's size, so scraping stays cheap; the expensive part ran in the rollup.
Tenants are labelled by slug (an installation has few); users never are.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from almanac.models import AgentKey, Tenant
from metrics.models import DailyFigure

# name in DailyFigure → (exported name, help, label names its key splits into)
TODAY = {
    "context_latency_ms_p50": ("context_latency_p50_ms_today", "Median context latency today (ms).", []),
    "context_latency_ms_p95": (
        "context_latency_p95_ms_today",
        "95th percentile context latency today (ms).",
        [],
    ),
    "context_latency_ms_p99": (
        "context_latency_p99_ms_today",
        "99th percentile context latency today (ms).",
        [],
    ),
    "memory_lifecycle": (
        "memory_lifecycle_today",
        "Memories superseded, compressed, decayed, purged today.",
        ["action"],
    ),
    "skill_runs": ("skill_runs_today", "Skill runs today by status (failed: failures).", ["status"]),
    "connector_events_failed": ("connector_events_failed_today", "Connector events that failed today.", []),
    "tasks_failed": ("tasks_failed_today", "django-q2 tasks that failed today.", []),
}
SNAPSHOT = {
    "memories": ("memories", "Memories held, by scope, kind and status.", ["scope", "kind", "status"]),
    "connector_lag_seconds": (
        "connector_lag_seconds",
        "Seconds since the most-behind source last synced.",
        [],
    ),
    "connector_sources_failing": ("connector_sources_failing", "Enabled sources whose last sync failed.", []),
    "queue_depth": ("queue_depth", "Tasks waiting in django-q2's queue.", []),
    "queued_tasks": ("queued_tasks", "Tasks asked for and not yet queued (deduplicated).", []),
}
RATES = {
    # exported name: (numerator, denominator, window setting, help)
    "memory_hit_rate": (
        "memories_adopted",
        "memories_returned",
        "METRICS_ADOPTION_DAYS",
        "Share of returned memories adopted.",
    ),
    "page_hit_rate": (
        "sections_adopted",
        "sections_returned",
        "METRICS_ADOPTION_DAYS",
        "Share of returned page sections adopted.",
    ),
    "repeated_question_rate": (
        "repeated_questions",
        "questions",
        "METRICS_REPEAT_DAYS",
        "Share of questions that repeat an earlier one.",
    ),
}


class FigureCollector:
    """The newest day's value of each figure, and the rates over their windows."""

    def collect(self):
        today = timezone.localdate()
        oldest = today - timedelta(days=max(settings.METRICS_ADOPTION_DAYS, settings.METRICS_REPEAT_DAYS))
        rows = list(
            DailyFigure.objects.filter(day__gte=oldest).values_list(
                "tenant_id", "day", "name", "key", "value"
            )
        )
        slugs = dict(Tenant.objects.values_list("pk", "slug"))
        yield from _latest(rows, slugs)
        yield from _rates(rows, slugs, today)
        yield from _by_key(rows, slugs, today)
        done = DailyFigure.objects.aggregate(at=Max("computed_at"))["at"]
        stamp = GaugeMetricFamily(
            "almanac_rollup_timestamp_seconds", "When the rollup last wrote its figures."
        )
        stamp.add_metric([], done.timestamp() if done else 0.0)
        yield stamp


def _family(name: str, help_text: str, labels: list[str], tenant: bool) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"almanac_{name}", help_text, labels=(["tenant"] if tenant else []) + labels)


def _latest(rows, slugs):
    """TODAY and SNAPSHOT figures: each (tenant, name)'s newest day."""
    newest: dict[tuple, object] = {}
    for tenant_id, day, name, _key, _value in rows:
        newest[(tenant_id, name)] = max(newest.get((tenant_id, name), day), day)
    for source, (name, help_text, labels) in {**TODAY, **SNAPSHOT}.items():
        tenant = source not in ("queue_depth", "queued_tasks", "tasks_failed")
        family = _family(name, help_text, labels, tenant)
        today = timezone.localdate()
        for tenant_id, day, row_name, key, value in rows:
            if row_name != source or day != newest[(tenant_id, source)]:
                continue
            if source in TODAY and day != today:
                continue  # nothing happened today
            values = key.split("/") if labels else []
            family.add_metric(([slugs.get(tenant_id, "")] if tenant else []) + values, value)
        yield family


def _rates(rows, slugs, today):
    for name, (numerator, denominator, window, help_text) in RATES.items():
        first = today - timedelta(days=getattr(settings, window) - 1)
        sums: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for tenant_id, day, row_name, _key, value in rows:
            if day >= first and row_name in (numerator, denominator):
                sums[tenant_id][row_name == denominator] += value
        family = _family(name, f"{help_text} Over the last {getattr(settings, window)} days.", [], True)
        for tenant_id, (part, whole) in sums.items():
            if whole:
                family.add_metric([slugs.get(tenant_id, "")], part / whole)
        yield family


def _by_key(rows, slugs, today):
    """Today's context calls by how they came and by agent key (keys are few, made by admins)."""
    names = dict(AgentKey.objects.values_list("pk", "name"))
    via = _family("context_calls_today", "Context calls today by how they came.", ["via"], True)
    keys = _family("context_calls_by_key_today", "Context calls today by agent key.", ["key"], True)
    for tenant_id, day, name, key, value in rows:
        if day == today and name == "context_calls":
            via.add_metric([slugs.get(tenant_id, ""), key], value)
        elif day == today and name == "context_calls_by_key":
            keys.add_metric([slugs.get(tenant_id, ""), names.get(int(key), key)], value)
    yield via
    yield keys
