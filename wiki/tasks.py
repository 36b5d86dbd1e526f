"""django-q2 tasks of the wiki: one compile per event (at-least-once delivery is safe)."""

from __future__ import annotations

# The sweep compiles events whose task was lost (a process killed between the ingest's
# commit and its on_commit enqueue) and retries failed ones.
SCHEDULES = [{"name": "wiki-compile-sweep", "func": "wiki.tasks.compile_sweep_task", "minutes": 5}]


def compile_event_task(event_id: int) -> None:
    """Compile one inbox event into the wiki. Idempotent: a compiled event is a no-op."""
    from wiki import services

    services.compile_event(event_id)


def page_summarize_task(page_id: int) -> None:
    """(Re)generate a page's summary if its sections changed since the last one."""
    from wiki import services

    services.page_summarize(page_id=page_id)


def compile_sweep_task() -> int:
    """Compile inbox events still pending after 2 minutes, and retry failed ones."""
    from wiki import services

    return services.compile_pending(min_age_seconds=120)
