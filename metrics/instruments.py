"""The Prometheus instruments every process writes (docs/operations.md, "Metrics").

Multiprocess mode: each process (gunicorn workers, django-q2 workers) keeps its values in
its own files under PROMETHEUS_MULTIPROC_DIR, and a scrape sums them (metrics.views). The
directory must be set before prometheus_client is first imported (it picks its value store
then), so this module sets it from METRICS_DIR when the environment does not; `manage.py up`
empties it at start. Only counters and histograms live here: their sums over live and dead
processes are right. What the database knows is read at scrape time (metrics.exposition).
"""

from __future__ import annotations

import os

from django.conf import settings


def multiprocess_dir() -> str:
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or str(settings.METRICS_DIR)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = path
    os.makedirs(path, exist_ok=True)
    return path


multiprocess_dir()

from prometheus_client import Counter, Histogram  # noqa: E402  (after the directory is set)

CONTEXT_CALLS = Counter(
    "almanac_context_calls",
    "Context calls recorded, by tenant and how they came (api, mcp, preview).",
    ["tenant", "via"],
)
CONTEXT_LATENCY = Histogram(
    "almanac_context_latency_seconds",
    "Context call latency inside the application (selection to prompt).",
    ["via"],
    buckets=(0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0),
)
TASKS = Counter("almanac_tasks", "django-q2 tasks finished, by result (success, failure).", ["result"])
