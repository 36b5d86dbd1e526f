"""Rebuilding the wiki from the inbox (`manage.py wiki_rebuild`), with progress.

A rebuild recompiles threads from the stored events, as the compiler does for one event,
so the result is the wiki the set of events makes, whatever order they were compiled in
and whatever entities and aliases existed then. It is idempotent: a second run rewrites
nothing (a section whose draft is unchanged is not written).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from almanac.search.keyword import StatsBuffer
from connectors.models import Event
from wiki.models import Entity, Page, PageSection, Rebuild
from wiki.services.backlog import compile_pending, domains_learn_relink
from wiki.services.compiler import StaleEntities, relinks_run, threads_recompile
from wiki.services.entities import relinks_take
from wiki.services.relink import relink_threads
from wiki.services.summary import summaries_enqueue
from wiki.services.threads import NO_CONTENT, Batch

log = logging.getLogger(__name__)

THREADS_PER_TRANSACTION = 500


def rebuild_start(*, tenant, page_slug: str = "") -> Rebuild:
    """A queued rebuild of the tenant's wiki (or of one page's threads)."""
    if page_slug and not Page.objects.filter(tenant=tenant, slug=page_slug).exists():
        from almanac.errors import ApplicationError

        raise ApplicationError(f"no page {page_slug!r} in tenant {tenant.slug!r}", status_code=404)
    return Rebuild.objects.create(tenant=tenant, page_slug=page_slug)


def _item_key(thread_key: str, source: str, external_id: str) -> str:
    return thread_key or f"item:{source}:{external_id}"


def rebuild_threads(*, rebuild: Rebuild) -> Counter:
    """{thread key: events} the rebuild covers: every thread of the tenant's inbox, or for a
    page, the threads it holds and those whose text names its entity (name or alias)."""
    events = Event.objects.filter(tenant_id=rebuild.tenant_id).exclude(kind__in=NO_CONTENT)
    rows = events.values_list("thread_key", "source__name", "external_id")
    if rebuild.page_slug:
        page = Page.objects.select_related("entity").get(tenant_id=rebuild.tenant_id, slug=rebuild.page_slug)
        keys = set(PageSection.objects.filter(page=page).values_list("thread_key", flat=True))
        entity: Entity = page.entity
        keys |= set(relink_threads(tenant_id=rebuild.tenant_id, terms=[entity.name, *entity.aliases]))
        counts = Counter(
            _item_key(*row)
            for row in rows.filter(thread_key__in=[k for k in keys if not k.startswith("item:")])
        )
        for key in keys:
            counts.setdefault(key, 1)
        return counts
    return Counter(_item_key(*row) for row in rows)


def _chunk_rebuild(*, tenant_id: int, keys: list[str]) -> list[list]:
    """Rebuild these threads in one transaction; the relinks they noted. Tried once more if an
    entity was merged away meanwhile (`StaleEntities`: the matcher is read again)."""
    for attempt in (1, 2):
        try:
            with transaction.atomic():
                batch = Batch(stats=StatsBuffer())
                summaries_enqueue(threads_recompile(tenant_id=tenant_id, keys=keys, batch=batch))
                batch.stats.flush()
                return relinks_take()
        except StaleEntities:
            relinks_take()
            if attempt == 2:
                raise
    return []


def rebuild_run(*, rebuild_id: int, progress: Callable[[Rebuild], None] | None = None) -> Rebuild:
    """Run a rebuild: drain the tenant's pending events (whole-tenant rebuilds), then rebuild
    every thread in key order, `THREADS_PER_TRANSACTION` per transaction, saving progress
    (events done / total) after each; then the relinks those rebuilds noted."""
    rebuild = Rebuild.objects.select_related("tenant").get(pk=rebuild_id)
    if rebuild.state == Rebuild.State.DONE:
        return rebuild
    rebuild.state, rebuild.started_at, rebuild.error = Rebuild.State.RUNNING, timezone.now(), ""
    rebuild.save(update_fields=["state", "started_at", "error"])
    try:
        if not rebuild.page_slug:
            compile_pending(tenant=rebuild.tenant)
        threads = rebuild_threads(rebuild=rebuild)
        keys = sorted(threads)
        Rebuild.objects.filter(pk=rebuild.pk).update(
            events_total=sum(threads.values()), threads_total=len(keys), events_done=0, threads_done=0
        )
        notes: list[list] = []
        for start in range(0, len(keys), THREADS_PER_TRANSACTION):
            chunk = keys[start : start + THREADS_PER_TRANSACTION]
            notes += _chunk_rebuild(tenant_id=rebuild.tenant_id, keys=chunk)
            Rebuild.objects.filter(pk=rebuild.pk).update(
                events_done=F("events_done") + sum(threads[k] for k in chunk),
                threads_done=F("threads_done") + len(chunk),
            )
            if progress is not None:
                rebuild.refresh_from_db()
                progress(rebuild)
        relinks_run(notes)
        domains_learn_relink(tenant_id=rebuild.tenant_id)
    except Exception as exc:
        log.exception("wiki rebuild %s failed", rebuild.pk)
        Rebuild.objects.filter(pk=rebuild.pk).update(
            state=Rebuild.State.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:4000],
            finished_at=timezone.now(),
        )
        rebuild.refresh_from_db()
        return rebuild
    Rebuild.objects.filter(pk=rebuild.pk).update(state=Rebuild.State.DONE, finished_at=timezone.now())
    rebuild.refresh_from_db()
    return rebuild
