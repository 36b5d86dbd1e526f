"""django-q2 tasks of the wiki: one waiting drain of the inbox per tenant and one waiting
summary per page, however many events arrive (`almanac.queue`); all idempotent, so
at-least-once delivery is safe."""

from __future__ import annotations

from almanac.queue import coalesced

# The sweep compiles events whose drain was lost (a process killed between the ingest's
# commit and its enqueue, or during the drain) and retries failed ones.
SCHEDULES = [{"name": "wiki-compile-sweep", "func": "wiki.tasks.compile_sweep_task", "minutes": 5}]


@coalesced
def inbox_drain_task(tenant_id: int) -> int:
    """Compile the tenant's pending inbox events (`wiki.services.backlog.inbox_drain`)."""
    from wiki.services.backlog import inbox_drain

    return inbox_drain(tenant_id=tenant_id)


@coalesced
def page_summarize_task(page_id: int) -> None:
    """(Re)generate a page's summary if its sections changed since the last one."""
    from wiki.services.summary import page_summarize

    page_summarize(page_id=page_id)


def compile_sweep_task() -> int:
    """Compile inbox events still pending after 2 minutes, and retry failed ones; learn the
    e-mail domains of customers of tenants whose mail was compiled since the last sweep."""
    from datetime import timedelta

    from django.utils import timezone

    from connectors.models import Event
    from wiki.services.backlog import compile_pending, domains_learn_relink

    compiled = compile_pending(min_age_seconds=120)
    since = timezone.now() - timedelta(minutes=10)
    mailed = Event.objects.filter(kind=Event.Kind.EMAIL, compiled_at__gte=since).values_list(
        "tenant_id", flat=True
    )
    for tenant_id in sorted(set(mailed)):
        domains_learn_relink(tenant_id=tenant_id)
    return compiled


def domains_learn_task(tenant_id: int, domains: list[str]) -> list:
    """Learn these e-mail domains as customers' aliases where the mail says so, and relink
    (`wiki.services.domains_learn_relink`): enqueued after a live e-mail from outside."""
    from wiki.services.backlog import domains_learn_relink

    return domains_learn_relink(tenant_id=tenant_id, domains=domains)


def entity_relink_task(tenant_id: int, notes: list) -> int:
    """Recompile the threads an entity change may relink (`wiki.services.entity_relink`):
    idempotent, a thread is rebuilt from the inbox."""
    from wiki.services.compiler import entity_relink

    return entity_relink(tenant_id=tenant_id, notes=notes)


def rebuild_task(rebuild_id: int) -> None:
    """Run a queued `wiki.models.Rebuild` (`manage.py wiki_rebuild --background`)."""
    from wiki.services.rebuild import rebuild_run

    rebuild_run(rebuild_id=rebuild_id)
