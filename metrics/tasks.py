"""Periodic jobs of the metrics (found by almanac.schedules)."""

from __future__ import annotations

from django.conf import settings

SCHEDULES = [
    {
        "name": "metrics-rollup",
        "func": "metrics.tasks.metrics_rollup",
        "minutes": settings.METRICS_ROLLUP_MINUTES,
    },
]


def metrics_rollup() -> int:
    from metrics.rollup import rollup

    return rollup()
