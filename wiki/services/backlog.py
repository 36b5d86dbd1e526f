"""Backlogs: many inbox events compiled at once (an import, the sweep, a rebuild, after an
outage), in batches that rebuild each thread once, with the next batch's texts embedded
ahead; then the customers' e-mail domains are learned."""

from __future__ import annotations

import logging
from collections import defaultdict
from contextlib import contextmanager
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from almanac.queue import enqueue_once
from almanac.search.embed_ahead import embed_ahead
from almanac.search.keyword import StatsBuffer
from connectors.models import Event
from wiki.matching import entity_matcher, matchers_forget
from wiki.models import PageSection
from wiki.services.compiler import BATCH, compile_event, relinks_run, threads_lock, threads_rebuild
from wiki.services.entities import domain_learnable, domains_learn, entities_from_tags, relinks_take
from wiki.services.sections import embed_cache_put, embed_missing
from wiki.services.summary import summaries_enqueue
from wiki.services.threads import NO_CONTENT, NOT_BASE, Batch, K, container_visibility, thread_of
from wiki.services.visibility import container_acl_sync, containers_acl_apply

log = logging.getLogger(__name__)


def compile_pending(tenant=None, limit: int | None = None, *, min_age_seconds: int = 0, progress=None) -> int:
    """Drain the inbox: compile pending (and retry failed) events in event-time order, in
    batches (`compile_batch`).

    Returns how many events were compiled. Used by the demo, `manage.py wiki_compile`,
    imports, recovery after an outage and the periodic sweep (which skips events younger than
    `min_age_seconds`, whose drain is still on its way); the live path is `inbox_drain`.
    `progress(done, total)` is called after each batch. Then the customers' e-mail domains
    are learned for the tenants compiled (`domains_learn_relink`).
    """
    qs = Event.objects.filter(state__in=[Event.State.PENDING, Event.State.FAILED])
    if min_age_seconds:
        qs = qs.filter(received_at__lt=timezone.now() - timedelta(seconds=min_age_seconds))
    if tenant is not None:
        qs = qs.filter(tenant=tenant)
    ids = list(qs.order_by("occurred_at", "id").values_list("id", flat=True)[:limit])
    compiled = _compile_ids(ids, progress=progress)
    if compiled:
        tenants = (
            {tenant.pk}
            if tenant is not None
            else set(Event.objects.filter(id__in=ids).values_list("tenant_id", flat=True))
        )
        for tenant_id in sorted(tenants):
            domains_learn_relink(tenant_id=tenant_id)
    return compiled


def _compile_ids(ids: list[int], *, progress=None) -> int:
    """Compile these events in batches of `BATCH` (`compile_batch`), the next batch's texts
    embedded (in a child process, for a long backlog) while this batch compiles."""
    chunks = [ids[start : start + BATCH] for start in range(0, len(ids), BATCH)]
    compiled = 0
    with embed_ahead(texts_expected=len(ids)) as ahead:
        texts, vectors = _embed_submit(ahead, chunks[0]) if chunks else ([], None)
        for n, chunk in enumerate(chunks):
            embed_cache_put(texts, vectors.result())
            if n + 1 < len(chunks):
                texts, vectors = _embed_submit(ahead, chunks[n + 1])
            compiled += compile_batch(chunk)
            if progress is not None:
                progress(min((n + 1) * BATCH, len(ids)), len(ids))
    return compiled


def inbox_drain_enqueue(tenant_id: int) -> None:
    """After an ingest commits: drain the tenant's inbox, unless a drain is already waiting
    (`almanac.queue.enqueue_once`: a burst asks for one task, not one per event)."""
    enqueue_once("wiki.tasks.inbox_drain_task", tenant_id)


def inbox_drain(*, tenant_id: int) -> int:
    """The live path: compile the tenant's pending events in batches (`compile_batch`: each
    thread rebuilt once per batch) until none is left; returns how many were compiled.

    One drain works per tenant at a time (a session advisory lock): a drain that finds
    another at work leaves its events to it, and the one at work looks at the inbox again
    after letting go, so an event stored as it finished is not left behind. Failed events
    are left to the sweep (`compile_pending`), and so are pending events another compile
    holds (the sweep, `wiki_compile`): a drain that compiled nothing twice stops.
    """
    compiled = idle = 0
    while idle < 2:
        with _drain_lock(tenant_id) as held:
            if not held:
                break
            done = _drain_rounds(tenant_id)
        compiled += done
        idle = idle + 1 if not done else 0
        if not Event.objects.filter(tenant_id=tenant_id, state=Event.State.PENDING).exists():
            break
    return compiled


def _drain_rounds(tenant_id: int) -> int:
    """Compile the tenant's pending events until a round finds none it can take; then learn
    the outside e-mail domains they came from (`domains_learn_relink`, those domains only)."""
    from almanac.models import Tenant

    compiled, domains = 0, set()
    while True:
        rows = list(
            Event.objects.filter(tenant_id=tenant_id, state=Event.State.PENDING)
            .order_by("occurred_at", "id")
            .values_list("id", "kind", "author")
        )
        done = _compile_ids([event_id for event_id, _, _ in rows]) if rows else 0
        if not done:
            break
        compiled += done
        domains |= {a.rsplit("@", 1)[1].lower() for _, kind, a in rows if kind == K.EMAIL and "@" in a}
    tenant = Tenant.objects.filter(pk=tenant_id).first()
    learnable = [d for d in sorted(domains) if tenant and domain_learnable(tenant=tenant, domain=d)]
    if learnable:
        domains_learn_relink(tenant_id=tenant_id, domains=learnable)
    return compiled


@contextmanager
def _drain_lock(tenant_id: int):
    """The tenant's drain lock (session-level, held across the drain's transactions), if free."""
    key = [f"wiki.inbox_drain:{tenant_id}"]  # one bigint: apart from the threads' (int, int) locks
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", key)
        held = cursor.fetchone()[0]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", key)


def domains_learn_relink(*, tenant_id: int, domains: list[str] | None = None) -> list[tuple[str, str]]:
    """`wiki.services.entities.domains_learn` (of `domains` only, if given), then the relinks
    of the domains learned, in this process (a backlog, a rebuild, the sweep and
    `wiki.tasks.domains_learn_task` after a live e-mail from outside call it)."""
    from almanac.models import Tenant

    with transaction.atomic():
        added = domains_learn(tenant=Tenant.objects.get(pk=tenant_id), domains=domains)
        notes = relinks_take()
    relinks_run(notes)
    return added


def _item_texts(event_ids: list[int]) -> list[str]:
    """The texts of the events' items, which their sections' embeddings average."""
    rows = Event.objects.filter(id__in=event_ids).exclude(kind__in=NOT_BASE).values_list("title", "text")
    return [f"{title}\n{text}".strip() for title, text in rows]


def _embed_submit(ahead, event_ids: list[int]) -> tuple[list[str], object]:
    """The events' texts not embedded yet, and the Future of their embeddings."""
    texts = embed_missing(_item_texts(event_ids))
    return texts, ahead.submit(texts)


def compile_batch(event_ids: list[int]) -> int:
    """Compile many inbox events at once (a backlog, an import, a rebuild); returns how many
    were compiled. The wiki is the one `compile_event` would make for each of them:

    1. in one transaction: lock the events (skipping ones a worker holds), lock their threads
       (and the threads their items left) in one order, rebuild each thread **once** from the
       inbox (the texts of changed sections embedded in one batch), apply each container's
       visibility once, mark the events compiled;
    2. relink older threads to the entities this batch created or named in new places
       (`entity_relink`), in this process.

    If the batch fails, its events are compiled one by one (`compile_event`: a bad event
    fails alone, marked `failed`).
    """
    try:
        with transaction.atomic():
            events = list(
                Event.objects.select_for_update(of=("self",), skip_locked=True)
                .select_related("source", "tenant")
                .filter(id__in=event_ids)
                .exclude(state=Event.State.COMPILED)
                .order_by("occurred_at", "id")
            )
            content = [e for e in events if e.kind not in NO_CONTENT]
            batch = Batch(stats=StatsBuffer())
            for tenant_id in {e.tenant_id for e in content}:  # one read of the containers' visibility
                batch.container_visibility(
                    tenant_id=tenant_id,
                    keys={e.container_key for e in content if e.tenant_id == tenant_id} - {""},
                )
            _batch_tags(content, batch=batch)
            named_first = relinks_take()  # before any thread of the batch was rebuilt
            threads, changed = _batch_rebuild(content, batch=batch)
            batch.stats.flush()
            summaries_enqueue(changed)
            Event.objects.filter(id__in=[e.id for e in events]).update(
                state=Event.State.COMPILED, compiled_at=timezone.now(), error=""
            )
            notes = relinks_take()
    except Exception:
        log.exception("batch compile of %s events failed: compiling them one by one", len(event_ids))
        matchers_forget()  # what the rolled-back batch changed on cached entities
        relinks_take()
        return sum(1 for event_id in event_ids if compile_event(event_id) == Event.State.COMPILED)
    relinks_run(named_first, skip=threads)  # the batch's own threads saw those entities
    relinks_run(notes)
    return len(events)


def _batch_tags(events: list[Event], *, batch: Batch) -> None:
    """The entities the batch's tags name, made (or named where they are) before any thread
    is rebuilt, so a thread of the batch that names one in its text links to it at once
    instead of being relinked after the batch."""
    for event in events:
        if not event.tags or event.kind == K.MESSAGE_DELETED:
            continue
        tenant, key = event.tenant, event.container_key
        public = batch.container_visibility(tenant_id=tenant.pk, keys=[key]).get(key, event.container_public)
        matcher = entity_matcher(tenant.pk, max_age=batch.matcher_age)
        named_in = tenant.group_key if public or not key else key
        entities_from_tags(
            tenant=tenant, tags=event.tags, matcher=matcher, named_in=named_in, seen_at=event.occurred_at
        )


def _batch_rebuild(events: list[Event], *, batch: Batch) -> tuple[set[str], set[int]]:
    """Rebuild each thread of the events (and each they left) once; (thread keys, pages changed)."""
    threads: dict[tuple[int, str], Event] = {}
    keys = {event.id: thread_of(event) for event in events}
    left = _batch_threads_left(events, keys)
    for event in events:
        threads.setdefault((event.tenant_id, keys[event.id]), event)
        for key in left.get(event.id, []):
            threads.setdefault((event.tenant_id, key), event)
    threads_lock(list(threads))
    changed: set[int] = set()
    for tenant_id in sorted({t for t, _ in threads}):
        mine = {key: event for (t, key), event in threads.items() if t == tenant_id}
        changed |= threads_rebuild(tenant=next(iter(mine.values())).tenant, threads=mine, batch=batch)
    newest: dict[int, dict[str, Event]] = defaultdict(dict)
    for event in events:  # event-time order: each container's newest event decides
        if event.container_key:
            newest[event.tenant_id][event.container_key] = event
    for containers in newest.values():
        tenant = next(iter(containers.values())).tenant
        known = container_visibility(tenant_id=tenant.pk, keys=list(containers))
        changed |= containers_acl_apply(
            tenant=tenant,
            containers={
                key: (public, f"container visibility changed (event {containers[key].id})")
                for key, public in known.items()
            },
        )
        for key in sorted(set(containers) - set(known)):  # not observed: its newest section decides
            changed |= container_acl_sync(event=containers[key], thread_key=keys[containers[key].id])
    return {key for _, key in threads}, changed


def _batch_threads_left(events: list[Event], keys: dict[int, str]) -> dict[int, list[str]]:
    """`threads_left` for every event of a batch in two queries: event id → the threads that
    older versions of its item named and that hold sections."""
    if len({e.tenant_id for e in events}) > 1:  # the sweep's batches span tenants
        out: dict[int, list[str]] = {}
        for tenant_id in {e.tenant_id for e in events}:
            out |= _batch_threads_left([e for e in events if e.tenant_id == tenant_id], keys)
        return out
    if not events:
        return {}
    tenant_id = events[0].tenant_id
    named: dict[tuple[int, str], set[str]] = defaultdict(set)
    rows = (
        Event.objects.filter(
            tenant_id=tenant_id,
            source_id__in={e.source_id for e in events},
            external_id__in={e.external_id for e in events},
        )
        .exclude(thread_key="")
        .values_list("source_id", "external_id", "thread_key")
    )
    for source_id, external_id, thread_key in rows:
        named[(source_id, external_id)].add(thread_key)
    other = {e.id: named.get((e.source_id, e.external_id), set()) - {keys[e.id]} for e in events}
    wanted = set().union(*other.values())
    held = (
        set(
            PageSection.objects.filter(tenant_id=tenant_id, thread_key__in=sorted(wanted))
            .values_list("thread_key", flat=True)
            .distinct()
        )
        if wanted
        else set()
    )
    return {event_id: sorted(keys_ & held) for event_id, keys_ in other.items() if keys_ & held}
