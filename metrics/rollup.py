"""The periodic rollup: each figure per tenant and day into `DailyFigure` (docs/operations.md, "Metrics").

Every METRICS_ROLLUP_MINUTES (django-q2 schedule, metrics.tasks) it judges the calls whose
windows are open, recomputes the days those judgments can still change (the last
METRICS_ADOPTION_DAYS + 1), and records today's snapshots (memories held, connector lag,
queue depth). Figures for a past day are final once outside that range; snapshots exist only
for the days the rollup ran, which is why the history is kept as rows, not recomputed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, Q
from django.db.models.functions import TruncDate
from django.utils import timezone
from django_q.models import OrmQ, Task

from almanac.models import AuditEvent, QueuedTask, Tenant
from connectors.models import Event, Source
from memories.models import Memory
from metrics.judging import judge_adoption, judge_repeats, questions
from metrics.models import ContextCall, DailyFigure
from skills.models import SkillRun

LIFECYCLE = {
    "memory.supersede": "supersede",
    "memory.compress": "compress",
    "memory.archive": "decay",
    "memory.purge": "purge",
}
Row = tuple[int | None, date, str, str, float]


def day_start(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time(), tzinfo=timezone.get_current_timezone())


def rollup(now: datetime | None = None) -> int:
    """Judge, compute and store; returns the number of figures written."""
    now = now or timezone.now()
    today = timezone.localdate(now)
    first = today - timedelta(days=settings.METRICS_ADOPTION_DAYS + 1)
    since = day_start(first)
    rows: list[Row] = []
    for tenant_id in Tenant.objects.values_list("pk", flat=True):
        judge_repeats(tenant_id=tenant_id, since=since)
        judge_adoption(tenant_id=tenant_id, since=since, now=now)
        rows += call_figures(tenant_id=tenant_id, since=since, until=now)
        rows += event_figures(tenant_id=tenant_id, since=since, until=now)
        rows += snapshot_figures(tenant_id=tenant_id, today=today, now=now)
    rows += installation_figures(since=since, until=now, today=today)
    store(rows, first=first, today=today)
    return len(rows)


@transaction.atomic
def store(rows: list[Row], *, first: date, today: date) -> None:
    """Replace the recomputed days' figures (and today's snapshots) with `rows`."""
    DailyFigure.objects.filter(day__gte=first, day__lte=today).delete()
    DailyFigure.objects.bulk_create(
        DailyFigure(tenant_id=tenant_id, day=day, name=name, key=key, value=value)
        for tenant_id, day, name, key, value in rows
    )


def _day(at: datetime) -> date:
    return timezone.localdate(at)


def call_figures(*, tenant_id: int, since, until) -> list[Row]:
    """Calls by how they came and by agent key, latency percentiles, returned and adopted
    items, questions and repeats: per day."""
    calls = ContextCall.objects.filter(tenant_id=tenant_id, at__gte=since, at__lte=until)
    rows: list[Row] = []
    per_day = calls.annotate(day=TruncDate("at")).values("day")
    for item in per_day.annotate(n=Count("pk")).values("day", "via", "n"):
        rows.append((tenant_id, item["day"], "context_calls", item["via"], item["n"]))
    for item in per_day.exclude(agent_key=None).annotate(n=Count("pk")).values("day", "agent_key_id", "n"):
        rows.append((tenant_id, item["day"], "context_calls_by_key", str(item["agent_key_id"]), item["n"]))
    rows += latency_figures(tenant_id=tenant_id, since=since, until=until)
    agents = list(calls.exclude(via=ContextCall.Via.PREVIEW).order_by("at", "pk"))
    sums: dict[tuple[date, str], float] = {}
    for call in agents:
        day = _day(call.at)
        for name, value in (
            ("memories_returned", len(call.memory_ids)),
            ("memories_adopted", len(call.adopted_memory_ids)),
            ("sections_returned", len(call.section_ids)),
            ("sections_adopted", len(call.adopted_section_ids)),
        ):
            sums[(day, name)] = sums.get((day, name), 0) + value
    for call in questions(agents):
        day = _day(call.at)
        sums[(day, "questions")] = sums.get((day, "questions"), 0) + 1
        sums[(day, "repeated_questions")] = sums.get((day, "repeated_questions"), 0) + (
            call.repeat_of_id is not None
        )
    rows += [(tenant_id, day, name, "", value) for (day, name), value in sums.items()]
    return rows


def latency_figures(*, tenant_id: int, since, until) -> list[Row]:
    """p50, p95 and p99 of the day's context latency (ms), computed by PostgreSQL."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT (at AT TIME ZONE %s)::date AS day,
                       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY latency_ms)
                FROM {ContextCall._meta.db_table}
                WHERE tenant_id = %s AND at >= %s AND at <= %s
                GROUP BY 1""",
            [str(timezone.get_current_timezone()), tenant_id, since, until],
        )
        found = cursor.fetchall()
    return [
        (tenant_id, day, f"context_latency_ms_{name}", "", value)
        for day, values in found
        for name, value in zip(("p50", "p95", "p99"), values, strict=True)
    ]


def _counted(rows: Iterable[dict], tenant_id: int | None, name: str, key_of) -> list[Row]:
    return [(tenant_id, item["day"], name, key_of(item), item["n"]) for item in rows]


def event_figures(*, tenant_id: int, since, until) -> list[Row]:
    """Lifecycle events (audit log), skill runs by status, connector events failed: per day."""
    audit = AuditEvent.objects.filter(
        tenant_id=tenant_id, action__in=list(LIFECYCLE), created_at__gte=since, created_at__lte=until
    )
    runs = SkillRun.objects.filter(tenant_id=tenant_id, created_at__gte=since, created_at__lte=until)
    failed = Event.objects.filter(
        tenant_id=tenant_id, state=Event.State.FAILED, received_at__gte=since, received_at__lte=until
    )

    def per_day(qs, field, *group):
        return qs.annotate(day=TruncDate(field)).values("day", *group).annotate(n=Count("pk"))

    return [
        *_counted(
            per_day(audit, "created_at", "action"),
            tenant_id,
            "memory_lifecycle",
            lambda i: LIFECYCLE[i["action"]],
        ),
        *_counted(per_day(runs, "created_at", "status"), tenant_id, "skill_runs", lambda i: i["status"]),
        *_counted(per_day(failed, "received_at"), tenant_id, "connector_events_failed", lambda i: ""),
    ]


def snapshot_figures(*, tenant_id: int, today: date, now) -> list[Row]:
    """Today's state: memories by scope, kind and status; the most-behind source's lag and
    the sources failing."""
    rows: list[Row] = [
        (tenant_id, today, "memories", f"{m['scope']}/{m['kind']}/{m['status']}", m["n"])
        for m in Memory.objects.filter(tenant_id=tenant_id)
        .values("scope", "kind", "status")
        .annotate(n=Count("pk"))
    ]
    sources = Source.objects.filter(tenant_id=tenant_id, enabled=True)
    if sources.exists():
        oldest = sources.aggregate(
            never=Count("pk", filter=Q(cursor__last_success_at=None)),
            failing=Count("pk", filter=Q(cursor__consecutive_failures__gt=0)),
            behind=Max(now - F("cursor__last_success_at")),
        )
        lag = oldest["behind"].total_seconds() if oldest["behind"] else 0.0
        rows.append((tenant_id, today, "connector_lag_seconds", "", lag))
        rows.append((tenant_id, today, "connector_sources_failing", "", oldest["failing"]))
        rows.append((tenant_id, today, "connector_sources_never_synced", "", oldest["never"]))
    return rows


def installation_figures(*, since, until, today: date) -> list[Row]:
    """django-q2's queue depth and the tasks waiting to be queued today; failed tasks per day."""
    failed = Task.objects.filter(success=False, stopped__gte=since, stopped__lte=until)
    failed = failed.annotate(day=TruncDate("stopped")).values("day").annotate(n=Count("pk"))
    return [
        (None, today, "queue_depth", "", OrmQ.objects.count()),
        (None, today, "queued_tasks", "", QueuedTask.objects.count()),
        *_counted(failed, None, "tasks_failed", lambda i: ""),
    ]
