"""The event-driven compiler: inbox events → the sections of their threads, rebuilt.

Each compile rebuilds an event's whole thread deterministically from the inbox
(`wiki.services.threads`): for every item of the thread (one `(source, external_id)`), the
version with the latest event time is its current state (last write by event time wins,
so an old version that arrives late changes nothing). Deleted items contribute nothing;
recalled e-mails make their sections stale; closed issues close the project page. Because
the result depends only on the set of events in the inbox, replays, retries and
out-of-order delivery all converge to the same wiki.

Safety: one transaction per event (or per batch of a backlog); per-thread advisory locks
are taken in key order before the inbox is read (so two workers never build a thread from
different snapshots) and the pages are row-locked in id order in one statement (so page
status/summary writes are serialized per page).
"""

from __future__ import annotations

import hashlib
import logging
import traceback
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django_q.tasks import async_task

from almanac.search.embed_ahead import embed_ahead
from almanac.search.keyword import StatsBuffer
from connectors.models import Event
from wiki.matching import entities_changed, entity_matcher
from wiki.models import Entity, Page, PageSection
from wiki.services.entities import domains_learn, entities_from_tags, relinks_take
from wiki.services.relink import relink_threads, thread_event
from wiki.services.sections import (
    SectionDraft,
    SectionWrites,
    embed_cache_put,
    embed_mean_prewarm,
    embed_missing,
)
from wiki.services.threads import (
    NO_CONTENT,
    NOT_BASE,
    Batch,
    K,
    container_acl,
    container_visibility,
    thread_of,
    thread_plan,
    threads_items,
    threads_left,
)

log = logging.getLogger(__name__)

BATCH = 500  # events per batch compile (compile_pending, rebuilds)


def _lock_thread(tenant_id: int, thread_key: str) -> None:
    _lock_threads([(tenant_id, thread_key)])


def _lock_threads(threads: list[tuple[int, str]]) -> None:
    """Take the threads' advisory locks in (tenant, key) order, in one statement: every
    compile locks in that order, so two never deadlock."""
    threads = sorted(set(threads))
    digests = [
        int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big", signed=True) for _, key in threads
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(t, d) FROM unnest(%s::int[], %s::int[]) AS u(t, d)",
            [[t for t, _ in threads], digests],
        )


# The reason on a page's history row for a status change: it says no more than the row's
# hidden fields (wiki.admin hides those rows from staff who are not superusers).
STATUS_REASON = "issue status"


def page_status_apply(
    *, page: Page, drafts: list[SectionDraft], before: dict[str, tuple], work: list[tuple] | None = None
) -> bool:
    """Refresh a page's stored status from its open work (every non-stale section's issue or
    PR: open if any is open, closed if all are; a page without any keeps its status), the tenant-wide value the
    admin shows; readers get theirs counted from the sections they may see
    (`wiki.selectors.page_work_status`). A manual status gives way when this thread's
    issue/PR changed (opened, closed, reopened) at an event time after it was set.

    `before`: {container key: (work_kind, work_open)} of the page's sections of this thread
    before the rebuild; `work`: the page's (work_open, occurred_at, container_key) now, newest
    first (`_pages_work`; read here if not given). Returns whether the page changed."""
    had_work = any(kind for kind, _ in before.values())
    if not (had_work or any(d.work_kind for d in drafts)):
        return False
    fields = []
    moved = [d for d in drafts if d.work_kind and before.get(d.container_key) != (d.work_kind, d.work_open)]
    if page.status_manual and any(d.work_at and d.work_at > page.status_manual_at for d in moved):
        page.status_manual, page.status_manual_at, page.status_manual_by = "", None, ""
        fields += ["status_manual", "status_manual_at", "status_manual_by"]
    work = _pages_work([page.pk]).get(page.pk, []) if work is None else work
    if work:
        status = Page.Status.OPEN if any(w[0] for w in work) else Page.Status.CLOSED
        at, container = work[0][1], work[0][2]
    else:  # its last issue left the page: a project is open, anything else active
        status = Page.Status.OPEN if page.kind == Entity.Kind.PROJECT else Page.Status.ACTIVE
        at, container = page.status_at, ""
    if (page.status, page.status_at, page.status_container) != (status, at, container):
        page.status, page.status_at, page.status_container = status, at, container
        fields += ["status", "status_at", "status_container"]
    if not fields:
        return False
    page._change_reason = STATUS_REASON  # not "issue closed": the history is read by staff too
    page.save(update_fields=[*fields, "updated_at"])
    return True


class StaleEntities(RuntimeError):
    """A batch resolved a name to an entity deleted since (a merge in another process): its
    events are compiled one by one instead, with the matcher read again."""


def _pages_work(page_ids) -> dict[int, list[tuple]]:
    """page id → its non-stale sections' (work_open, occurred_at, container_key), newest first."""
    rows = (
        PageSection.objects.filter(page_id__in=list(page_ids), stale=False)
        .exclude(work_kind="")
        .order_by("page_id", "-occurred_at", "-id")
        .values_list("page_id", "work_open", "occurred_at", "container_key")
    )
    work: dict[int, list[tuple]] = defaultdict(list)
    for page_id, *row in rows:
        work[page_id].append(tuple(row))
    return work


def threads_rebuild(*, tenant, threads: dict[str, Event], batch: Batch | None = None) -> set[int]:
    """Steps 2–5 of a compile for threads of one tenant that the caller has locked, inside its
    transaction; returns the changed page ids.

    2. read the threads' items from the inbox (two queries for all), 3. resolve their
    entities, 4. lock the affected pages in id order (one statement), 5. write and delete
    sections (in bulk, `SectionWrites`) and refresh the pages' status.
    `threads`: thread key → the event that asks for it (a thread its item has left too).
    """
    items = threads_items(tenant_id=tenant.pk, threads=threads)
    plans = {
        key: thread_plan(tenant=tenant, thread_key=key, items=items[key], batch=batch)
        for key in sorted(threads)
    }
    existing: dict[str, list[PageSection]] = defaultdict(list)
    rows = PageSection.objects.filter(tenant=tenant, thread_key__in=sorted(threads))
    for section in rows.defer("embedding", "search_vector"):
        existing[section.thread_key].append(section)
    entity_ids = {pk for plan in plans.values() for pk in plan}
    held = {s.page_id for sections in existing.values() for s in sections}
    pages = Page.objects.select_for_update().filter(Q(id__in=held) | Q(entity_id__in=entity_ids))
    pages = {page.pk: page for page in pages.order_by("id")}
    page_of = {page.entity_id: page.pk for page in pages.values()}
    if entity_ids - set(page_of):  # deleted (merged) since this process's matcher read them
        entities_changed(tenant.pk)
        raise StaleEntities(
            f"entities {sorted(entity_ids - set(page_of))} are gone; the matcher is read again"
        )
    writes = SectionWrites(batch.stats if batch else None)
    changed: set[int] = set()
    statuses = []
    for key in sorted(threads):
        reason = f"event {threads[key].id} ({threads[key].kind})"
        mine: dict[int, dict[str, PageSection]] = defaultdict(dict)
        for section in existing[key]:
            mine[section.page_id][section.container_key] = section
        for page_id in sorted(set(mine) | {page_of[pk] for pk in plans[key] if pk in page_of}):
            page = pages[page_id]
            drafts = plans[key].get(page.entity_id, (None, []))[1]
            keep = {d.container_key for d in drafts}
            for draft in drafts:
                if writes.write(
                    page=page, draft=draft, reason=reason, existing=mine[page_id].get(draft.container_key)
                ):
                    changed.add(page_id)
            for container_key, section in mine[page_id].items():
                if container_key not in keep:
                    writes.delete(section=section, reason=reason)
                    changed.add(page_id)
            before = {k: (s.work_kind, s.work_open) for k, s in mine[page_id].items()}
            statuses.append((page, drafts, before))
    writes.flush()
    work = _pages_work(
        {
            page.pk
            for page, drafts, before in statuses
            if any(d.work_kind for d in drafts) or any(k for k, _ in before.values())
        }
    )
    for page, drafts, before in statuses:
        if page_status_apply(page=page, drafts=drafts, before=before, work=work.get(page.pk, [])):
            changed.add(page.pk)
    return changed


def thread_rebuild(*, event: Event, thread_key: str | None = None, batch: Batch | None = None) -> set[int]:
    """Steps 1–5 of a compile for the event's thread (or `thread_key`, another thread: one
    its item has left), inside the caller's transaction; returns the changed page ids."""
    thread_key = thread_key or thread_of(event)
    _lock_thread(event.tenant_id, thread_key)
    return threads_rebuild(tenant=event.tenant, threads={thread_key: event}, batch=batch)


def container_acl_apply(*, tenant, container_key: str, public: bool, reason: str) -> set[int]:
    """Every section of the container gets the ACL its visibility says; the pages changed."""
    return containers_acl_apply(tenant=tenant, containers={container_key: (public, reason)})


def containers_acl_apply(*, tenant, containers: dict[str, tuple[bool, str]]) -> set[int]:
    """`container_acl_apply` for many containers ({key: (public, reason)}): the sections whose
    ACL is not what their container's visibility says are found in one query."""
    if not containers:
        return set()
    keys = sorted(containers)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT s.id FROM {PageSection._meta.db_table} s
                JOIN unnest(%s::text[], %s::bool[]) AS c(key, public) ON s.container_key = c.key
                CROSS JOIN LATERAL (SELECT CASE WHEN c.public THEN ARRAY[c.key, %s] ELSE ARRAY[c.key] END AS acl) e
                WHERE s.tenant_id = %s AND NOT (s.acl @> e.acl::varchar[] AND s.acl <@ e.acl::varchar[])""",
            [keys, [containers[k][0] for k in keys], tenant.group_key, tenant.pk],
        )
        ids = [row[0] for row in cursor.fetchall()]
    changed = set()
    sections = PageSection.objects.filter(id__in=ids).defer("embedding", "search_vector")
    for section in sections.select_for_update(of=("self",)).order_by("id"):
        public, reason = containers[section.container_key]
        section.acl = container_acl(tenant=tenant, container_key=section.container_key, public=public)
        section._change_reason = reason
        section.save(update_fields=["acl", "updated_at"])
        changed.add(section.page_id)
    return changed


def container_acl_sync(*, event: Event, thread_key: str) -> set[int]:
    """A container that turned private (or public) changes every section from it, not only
    this thread's: otherwise old threads of a now-private channel stay readable tenant-wide.

    The container's observed visibility decides. A container not observed since that was
    recorded (events stored before the upgrade) falls back to its newest other section: an
    older event than that changes nothing.
    """
    if not event.container_key or event.kind in NO_CONTENT:
        return set()
    reason = f"container visibility changed (event {event.id})"
    known = container_visibility(tenant_id=event.tenant_id, keys=[event.container_key])
    if event.container_key in known:
        return container_acl_apply(
            tenant=event.tenant,
            container_key=event.container_key,
            public=known[event.container_key],
            reason=reason,
        )
    acl = container_acl(tenant=event.tenant, container_key=event.container_key, public=event.container_public)
    sections = PageSection.objects.filter(tenant_id=event.tenant_id, container_key=event.container_key)
    newest = (
        sections.exclude(thread_key=thread_key).order_by("-occurred_at").values_list("acl", "occurred_at")
    )
    newest = newest.first()
    if newest is None or newest[0] == acl or event.occurred_at < newest[1]:
        return set()  # unchanged, or an older event: the container's newest event decides
    return container_acl_apply(
        tenant=event.tenant, container_key=event.container_key, public=event.container_public, reason=reason
    )


def container_visibility_at_ingest(*, tenant, container_key: str, public: bool) -> None:
    """A container observed to have turned private (or public) at ingest: all its sections,
    this event's thread too, follow when the event is stored, not when a worker compiles it."""
    _enqueue_summaries(
        container_acl_apply(
            tenant=tenant, container_key=container_key, public=public, reason="container visibility observed"
        )
    )


def _enqueue_summaries(page_ids: set[int]) -> None:
    if not settings.WIKI_SUMMARY_ENABLED:
        return
    for page_id in sorted(page_ids):
        transaction.on_commit(lambda pid=page_id: async_task("wiki.tasks.page_summarize_task", pid))


def compile_event(event_id: int) -> str | None:
    """Compile one inbox event (idempotent, one transaction). Returns the event's state.

    A failure rolls back everything the compile wrote and marks the event `failed` with
    the error; `compile_pending` retries failed events.
    """
    try:
        with transaction.atomic():
            event = (
                Event.objects.select_for_update(of=("self",))
                .select_related("source", "tenant")
                .filter(id=event_id)
                .first()
            )
            if event is None or event.state == Event.State.COMPILED:
                return event.state if event else None
            if event.kind not in NO_CONTENT:
                thread_key = thread_of(event)
                left = threads_left(event=event, thread_key=thread_key)
                _lock_threads([(event.tenant_id, key) for key in [thread_key, *left]])
                changed = threads_rebuild(
                    tenant=event.tenant, threads=dict.fromkeys([thread_key, *left], event)
                )
                changed |= container_acl_sync(event=event, thread_key=thread_key)
                _enqueue_summaries(changed)
            event.state, event.compiled_at, event.error = Event.State.COMPILED, timezone.now(), ""
            event.save(update_fields=["state", "compiled_at", "error"])
            return event.state
    except Exception as exc:
        log.exception("compiling event %s failed", event_id)
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"[:4000]
        Event.objects.filter(id=event_id).exclude(state=Event.State.COMPILED).update(
            state=Event.State.FAILED, error=error
        )
        return Event.State.FAILED


def compile_pending(tenant=None, limit: int | None = None, *, min_age_seconds: int = 0, progress=None) -> int:
    """Drain the inbox: compile pending (and retry failed) events in event-time order, in
    batches (`compile_batch`).

    Returns how many events were compiled. Used by the demo, `manage.py wiki_compile`,
    imports, recovery after an outage and the periodic sweep (which skips events younger than
    `min_age_seconds`, whose own task is still on its way); the live path is one task per event.
    `progress(done, total)` is called after each batch. Then the customers' e-mail domains
    are learned for the tenants compiled (`domains_learn_relink`).
    """
    qs = Event.objects.filter(state__in=[Event.State.PENDING, Event.State.FAILED])
    if min_age_seconds:
        qs = qs.filter(received_at__lt=timezone.now() - timedelta(seconds=min_age_seconds))
    if tenant is not None:
        qs = qs.filter(tenant=tenant)
    ids = list(qs.order_by("occurred_at", "id").values_list("id", flat=True)[:limit])
    chunks = [ids[start : start + BATCH] for start in range(0, len(ids), BATCH)]
    compiled = 0
    # The next batch's texts are embedded (in a child process, for a long backlog) while
    # this batch compiles.
    with embed_ahead(texts_expected=len(ids)) as ahead:
        texts, vectors = _embed_submit(ahead, chunks[0]) if chunks else ([], None)
        for n, chunk in enumerate(chunks):
            embed_cache_put(texts, vectors.result())
            if n + 1 < len(chunks):
                texts, vectors = _embed_submit(ahead, chunks[n + 1])
            compiled += compile_batch(chunk, prewarm=False)
            if progress is not None:
                progress(min((n + 1) * BATCH, len(ids)), len(ids))
    if compiled:
        tenants = (
            {tenant.pk}
            if tenant is not None
            else set(Event.objects.filter(id__in=ids).values_list("tenant_id", flat=True))
        )
        for tenant_id in sorted(tenants):
            domains_learn_relink(tenant_id=tenant_id)
    return compiled


def domains_learn_relink(*, tenant_id: int) -> list[tuple[str, str]]:
    """`wiki.services.entities.domains_learn`, then the relinks of the domains learned, in
    this process (a backlog, a rebuild and the sweep call it)."""
    from almanac.models import Tenant

    with transaction.atomic():
        added = domains_learn(tenant=Tenant.objects.get(pk=tenant_id))
        notes = relinks_take()
    _relink_notes(notes)
    return added


def _item_texts(event_ids: list[int]) -> list[str]:
    """The texts of the events' items, which their sections' embeddings average."""
    rows = Event.objects.filter(id__in=event_ids).exclude(kind__in=NOT_BASE).values_list("title", "text")
    return [f"{title}\n{text}".strip() for title, text in rows]


def _embed_submit(ahead, event_ids: list[int]) -> tuple[list[str], object]:
    """The events' texts not embedded yet, and the Future of their embeddings."""
    texts = embed_missing(_item_texts(event_ids))
    return texts, ahead.submit(texts)


def compile_batch(event_ids: list[int], *, prewarm: bool = True) -> int:
    """Compile many inbox events at once (a backlog, an import, a rebuild); returns how many
    were compiled. The wiki is the one `compile_event` would make for each of them:

    1. embed the items' texts in batches;
    2. in one transaction: lock the events (skipping ones a worker holds), lock their threads
       (and the threads their items left) in one order, rebuild each thread **once** from the
       inbox, apply each container's visibility once, mark the events compiled;
    3. relink older threads to the entities this batch created or named in new places
       (`entity_relink`), in this process.

    If the batch fails, its events are compiled one by one (`compile_event`: a bad event
    fails alone, marked `failed`).
    """
    if prewarm:  # else the caller has (compile_pending, ahead)
        embed_mean_prewarm(_item_texts(event_ids))
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
            _enqueue_summaries(changed)
            Event.objects.filter(id__in=[e.id for e in events]).update(
                state=Event.State.COMPILED, compiled_at=timezone.now(), error=""
            )
            notes = relinks_take()
    except Exception:
        log.exception("batch compile of %s events failed: compiling them one by one", len(event_ids))
        relinks_take()
        return sum(1 for event_id in event_ids if compile_event(event_id) == Event.State.COMPILED)
    _relink_notes(named_first, skip=threads)  # the batch's own threads saw those entities
    _relink_notes(notes)
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
    _lock_threads(list(threads))
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


def _relink_notes(notes: list[list], skip=frozenset()) -> None:
    by_tenant: dict[int, list] = defaultdict(list)
    for tenant_id, *note in notes:
        by_tenant[tenant_id].append(note)
    for tenant_id, tenant_notes in sorted(by_tenant.items()):
        entity_relink(tenant_id=tenant_id, notes=tenant_notes, skip=skip)


def thread_recompile(*, tenant_id: int, thread_key: str) -> set[int]:
    """Rebuild one thread from the inbox (inside the caller's transaction); the pages changed."""
    event = thread_event(tenant_id=tenant_id, thread_key=thread_key)
    if event is None:
        return set()
    return thread_rebuild(event=event, thread_key=thread_key)


def entity_relink(*, tenant_id: int, notes: list[list], skip=frozenset()) -> int:
    """Recompile the threads that notes of `relink_note` say may link differently now
    ([entity id, terms, containers or None] each); a thread's own transaction each. The
    relinks these rebuilds note in turn (a name now seen in another container) are done
    too, except threads in `skip`. Returns how many threads were rebuilt."""
    queue = [(n[0], tuple(n[1]), tuple(n[2] or ())) for n in notes]
    done: set[tuple] = set()
    rebuilt = 0
    while queue:
        note = queue.pop(0)
        if note in done:
            continue
        done.add(note)
        _, terms, containers = note
        for key in relink_threads(
            tenant_id=tenant_id, terms=list(terms), containers=list(containers) or None
        ):
            if key in skip:
                continue
            with transaction.atomic():
                _lock_thread(tenant_id, key)
                _enqueue_summaries(thread_recompile(tenant_id=tenant_id, thread_key=key))
                queue += [(n[1], tuple(n[2]), tuple(n[3] or ())) for n in relinks_take()]
            rebuilt += 1
    return rebuilt
