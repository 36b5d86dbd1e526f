"""The admin's landing page: the outcome metrics over time (docs/operations.md, "Dashboard").

Read from the rollup's `DailyFigure` rows (a few per tenant and day) and, for the tables of
agent keys and users, from the period's `ContextCall` rows. A superuser sees every tenant
summed and the installation's queue; a tenant's admin only their own tenant's rows; a
department admin none (the figures are per tenant, wider than their departments).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from almanac.admin_mixins import staff_tenant_id, staff_units
from almanac.permissions import runs_installation, sees_everything
from metrics.charts import line_chart
from metrics.models import ContextCall, DailyFigure
from metrics.rollup import LIFECYCLE


@dataclass
class Panel:
    title: str
    value: str
    url: str
    chart: SafeString
    note: str = ""


def changelist(name: str, **query) -> str:
    """The admin list behind a number (with its filter), "" when that list is not registered."""
    try:
        url = reverse(f"admin:{name}_changelist")
    except NoReverseMatch:
        return ""
    return f"{url}?{urlencode(query)}" if query else url


# Figures that do not add up across tenants: a superuser sees the worst tenant's (the
# highest latency percentile, the most-behind source), not their sum.
WORST_OF_TENANTS = {
    "context_latency_ms_p50",
    "context_latency_ms_p95",
    "context_latency_ms_p99",
    "connector_lag_seconds",
}


def _figures(tenant_id: int | None, first: date, everything: bool) -> dict[str, dict[date, dict[str, float]]]:
    """{name: {day: {key: value}}} of the period; for a superuser summed over tenants (the
    worst tenant's for WORST_OF_TENANTS)."""
    rows = DailyFigure.objects.filter(day__gte=first)
    if not everything:
        rows = rows.filter(tenant_id=tenant_id)
    out: dict = defaultdict(lambda: defaultdict(dict))
    for day, name, key, value in rows.values_list("day", "name", "key", "value"):
        held = out[name][day].get(key)
        if held is None:
            out[name][day][key] = value
        else:
            out[name][day][key] = max(held, value) if name in WORST_OF_TENANTS else held + value
    return out


def _series(figures, name, days, combine=sum) -> list[tuple[date, float | None]]:
    by_day = figures.get(name, {})
    return [(day, combine(by_day[day].values()) if day in by_day else None) for day in days]


def _ratio(figures, part, whole, days) -> list[tuple[date, float | None]]:
    parts, wholes = dict(_series(figures, part, days)), dict(_series(figures, whole, days))
    return [(day, (parts[day] or 0) / wholes[day] if wholes[day] else None) for day in days]


def _period_ratio(figures, part, whole, days) -> float | None:
    """part / whole over the whole period (the headline of a rate: not the last day's alone)."""
    total = _total(_series(figures, whole, days))
    return _total(_series(figures, part, days)) / total if total else None


def _last(points) -> float | None:
    return next((value for _day, value in reversed(points) if value is not None), None)


def _total(points) -> float:
    return sum(value for _day, value in points if value is not None)


def _shown(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value * 100:.1f}%" if percent else f"{value:,.0f}"


def dashboard(request) -> dict:
    """The template's context: panels, tables and the period."""
    user = request.user
    everything = sees_everything(user)
    if not everything and staff_units(request) is not None:
        return {"panels": []}  # a department admin: the figures are the whole tenant's
    tenant_id = None if everything else staff_tenant_id(request)
    today = timezone.localdate()
    days = [today - timedelta(days=n) for n in range(settings.METRICS_DASHBOARD_DAYS - 1, -1, -1)]
    figures = _figures(tenant_id, days[0], everything)
    panels = outcome_panels(figures, days) + health_panels(figures, days)
    if runs_installation(user):
        panels += queue_panels(figures, days)
    calls = ContextCall.objects.filter(at__date__gte=days[0])
    if not everything:
        calls = calls.filter(tenant_id=tenant_id)
    return {
        "panels": panels,
        "days": len(days),
        "top_users": top(calls, "user", "user__username"),
        "top_keys": top(calls.exclude(agent_key=None), "agent_key", "agent_key__name"),
        "calls_url": changelist("metrics_contextcall"),
    }


def top(calls, field: str, name: str, limit: int = 10) -> list[dict]:
    rows = calls.values(field, name).annotate(n=Count("pk")).order_by("-n", name)[:limit]
    return [
        {
            "name": row[name],
            "calls": row["n"],
            "url": changelist("metrics_contextcall", **{field: row[field]}),
        }
        for row in rows
    ]


def outcome_panels(figures, days) -> list[Panel]:
    calls = _series(figures, "context_calls", days)
    memory_hits = _ratio(figures, "memories_adopted", "memories_returned", days)
    page_hits = _ratio(figures, "sections_adopted", "sections_returned", days)
    repeats = _ratio(figures, "repeated_questions", "questions", days)
    p95 = _series(figures, "context_latency_ms_p95", days, combine=max)
    calls_url = changelist("metrics_contextcall")
    return [
        Panel(
            _("Context calls"), _shown(_total(calls)), calls_url, line_chart(calls, label=_("Context calls"))
        ),
        Panel(
            _("Memory hit rate"),
            _shown(_period_ratio(figures, "memories_adopted", "memories_returned", days), True),
            changelist("metrics_contextcall", adopted_memory_ids__len__gt=0),
            line_chart(memory_hits, label=_("Memory hit rate"), percent=True),
        ),
        Panel(
            _("Page hit rate"),
            _shown(_period_ratio(figures, "sections_adopted", "sections_returned", days), True),
            changelist("metrics_contextcall", adopted_section_ids__len__gt=0),
            line_chart(page_hits, label=_("Page hit rate"), percent=True),
        ),
        Panel(
            _("Repeated-question rate"),
            _shown(_period_ratio(figures, "repeated_questions", "questions", days), True),
            changelist("metrics_contextcall", repeat_of__isnull="False"),
            line_chart(repeats, label=_("Repeated-question rate"), percent=True),
        ),
        Panel(
            _("Context latency p95 (ms)"),
            _shown(_last(p95)),
            changelist("metrics_contextcall"),
            line_chart(p95, label=_("Context latency p95 (ms)")),
        ),
    ]


def health_panels(figures, days) -> list[Panel]:
    held = _series(figures, "memories", days)
    lifecycle = _series(figures, "memory_lifecycle", days)
    lag = [
        (day, v / 3600 if v is not None else None)
        for day, v in _series(figures, "connector_lag_seconds", days, max)
    ]
    failing = _last(_series(figures, "connector_sources_failing", days))
    runs = _series(figures, "skill_runs", days)
    failed = [(day, (figures.get("skill_runs", {}).get(day) or {}).get("failed")) for day in days]
    return [
        Panel(
            _("Memories held"),
            _shown(_last(held)),
            changelist("memories_memory"),
            line_chart(held, label=_("Memories held")),
        ),
        Panel(
            _("Superseded, compressed, decayed, purged"),
            _shown(_total(lifecycle)),
            changelist("almanac_auditevent", action__in=",".join(LIFECYCLE)),
            line_chart(lifecycle, label=_("Superseded, compressed, decayed, purged")),
        ),
        Panel(
            _("Connector lag (hours)"),
            _shown(_last(lag)),
            changelist("connectors_source"),
            line_chart(lag, label=_("Connector lag (hours)")),
            note=_("%(n)s sources failing") % {"n": _shown(failing or 0)},
        ),
        Panel(
            _("Skill runs"),
            _shown(_total(runs)),
            changelist("skills_skillrun"),
            line_chart(runs, label=_("Skill runs")),
        ),
        Panel(
            _("Skill failures"),
            _shown(_total(failed)),
            changelist("skills_skillrun", status__exact="failed"),
            line_chart(failed, label=_("Skill failures")),
        ),
    ]


def queue_panels(figures, days) -> list[Panel]:
    depth = _series(figures, "queue_depth", days)
    failed = _series(figures, "tasks_failed", days)
    return [
        Panel(
            _("Queue depth"),
            _shown(_last(depth)),
            changelist("django_q_ormq"),
            line_chart(depth, label=_("Queue depth")),
        ),
        Panel(
            _("Failed tasks"),
            _shown(_total(failed)),
            changelist("django_q_failure"),
            line_chart(failed, label=_("Failed tasks")),
        ),
    ]
