"""django-q2 tasks of the wiki: one compile per event (at-least-once delivery is safe)."""

from __future__ import annotations

SCHEDULES: list[dict] = []


def compile_event_task(event_id: int) -> None:
    """Compile one inbox event into the wiki. Idempotent: a compiled event is a no-op."""
    from wiki import services

    services.compile_event(event_id)


def page_summarize_task(page_id: int) -> None:
    """(Re)generate a page's summary if its sections changed since the last one."""
    from wiki import services

    services.page_summarize(page_id=page_id)
