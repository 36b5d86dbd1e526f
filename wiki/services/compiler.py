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

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django_q.tasks import async_task

from connectors.models import Event
from wiki.matching import entities_changed, matchers_forget
from wiki.models import Entity, Page, PageSection
from wiki.services.entities import LINKED_KINDS, domain_learnable, relinks_take
from wiki.services.people import contacts_add, people_compile
from wiki.services.relink import relink_threads, thread_event
from wiki.services.sections import (
    SectionDraft,
    SectionWrites,
)
from wiki.services.summary import summaries_enqueue
from wiki.services.threads import (
    NO_CONTENT,
    Batch,
    K,
    thread_of,
    thread_plan,
    threads_items,
    threads_left,
)
from wiki.services.visibility import container_acl_sync

log = logging.getLogger(__name__)

BATCH = 500  # events per batch compile (compile_pending, rebuilds)


def threads_lock(threads: list[tuple[int, str]]) -> None:
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
    PR: open if any is open, closed if all are; a page without any keeps its status; a
    customer's is `active`), the tenant-wide value the
    admin shows; readers get theirs counted from the sections they may see
    (`wiki.status.work_status`). A manual status gives way when this thread's
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
    if work and page.kind != Entity.Kind.CUSTOMER:
        status = Page.Status.OPEN if any(w[0] for w in work) else Page.Status.CLOSED
        at, container = work[0][1], work[0][2]
    else:  # its last issue left the page: a project is open, anything else active; a
        # customer is active whatever its issues (its readers see its open items: `wiki.status`)
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

    2. read the threads' items from the inbox (two queries for all) and make the person
    pages of the employees they name (`people_compile`), 3. resolve their entities and the
    customers' contacts among their participants (`contacts_add`), 4. lock the affected pages in id order (one statement), 5. write and delete
    sections (in bulk, `SectionWrites`) and refresh the pages' status.
    `threads`: thread key → the event that asks for it (a thread its item has left too).
    """
    items = threads_items(tenant_id=tenant.pk, threads=threads)
    people_compile(tenant=tenant, items=[item for key in sorted(items) for item in items[key]])
    plans = {
        key: thread_plan(tenant=tenant, thread_key=key, items=items[key], batch=batch)
        for key in sorted(threads)
    }
    for key, plan in plans.items():
        contacts_add(tenant=tenant, items=items[key], plan=plan)
    existing: dict[str, list[PageSection]] = defaultdict(list)
    rows = PageSection.objects.filter(tenant=tenant, thread_key__in=sorted(threads))
    for section in rows.defer("embedding", "search_vector"):
        existing[section.thread_key].append(section)
    pages = _pages_lock(tenant=tenant, plans=plans, existing=existing)
    writes = SectionWrites(batch.stats if batch else None)
    changed: set[int] = set()
    statuses = []
    for key in sorted(threads):
        reason = f"event {threads[key].id} ({threads[key].kind})"
        changed |= _thread_write(
            plan=plans[key],
            existing=existing[key],
            pages=pages,
            writes=writes,
            reason=reason,
            statuses=statuses,
        )
    writes.flush()
    return changed | _statuses_apply(statuses)


def _pages_lock(*, tenant, plans: dict, existing: dict[str, list[PageSection]]) -> dict[int, Page]:
    """The pages the threads' sections are on or will be on, row-locked in id order in one
    statement. Raises `StaleEntities` if a planned entity has no page any more."""
    entity_ids = {pk for plan in plans.values() for pk in plan}
    held = {s.page_id for sections in existing.values() for s in sections}
    rows = Page.objects.select_for_update().filter(Q(id__in=held) | Q(entity_id__in=entity_ids))
    pages = {page.pk: page for page in rows.order_by("id")}
    gone = entity_ids - {page.entity_id for page in pages.values()}
    if gone:  # deleted (merged) since this process's matcher read them
        entities_changed(tenant.pk)
        raise StaleEntities(f"entities {sorted(gone)} are gone; the matcher is read again")
    _titles_sync(pages)
    return pages


def _titles_sync(pages: dict[int, Page]) -> None:
    """Customer and project pages take their entity's name (a tag may have respelled it:
    `entity_spelled`), now that they are locked."""
    renamed = (
        Page.objects.filter(id__in=list(pages), kind__in=LINKED_KINDS)
        .exclude(title=F("entity__name"))
        .values_list("id", "entity__name")
    )
    for page_id, name in renamed:
        page = pages[page_id]
        page.title = name
        page._change_reason = "entity renamed: the earliest public spelling"
        page.save(update_fields=["title", "updated_at"])


def _thread_write(
    *, plan, existing: list[PageSection], pages: dict[int, Page], writes, reason, statuses
) -> set[int]:
    """One thread's sections made to match its plan (written at `writes.flush`); the pages
    changed. Appends (page, drafts, work before) to `statuses` for each page it touches."""
    page_of = {page.entity_id: page.pk for page in pages.values()}
    mine: dict[int, dict[str, PageSection]] = defaultdict(dict)
    for section in existing:
        mine[section.page_id][section.container_key] = section
    changed = set()
    for page_id in sorted(set(mine) | {page_of[pk] for pk in plan}):
        page = pages[page_id]
        drafts = plan.get(page.entity_id, (None, []))[1]
        for draft in drafts:
            current = mine[page_id].get(draft.container_key)
            if writes.write(page=page, draft=draft, reason=reason, existing=current):
                changed.add(page_id)
        keep = {d.container_key for d in drafts}
        for container_key, section in mine[page_id].items():
            if container_key not in keep:
                writes.delete(section=section, reason=reason)
                changed.add(page_id)
        before = {k: (s.work_kind, s.work_open) for k, s in mine[page_id].items()}
        statuses.append((page, drafts, before))
    return changed


def _statuses_apply(statuses: list[tuple]) -> set[int]:
    """`page_status_apply` for each (page, drafts, before), from one read of the pages' work."""
    work = _pages_work(
        {
            page.pk
            for page, drafts, before in statuses
            if any(d.work_kind for d in drafts) or any(k for k, _ in before.values())
        }
    )
    changed = set()
    for page, drafts, before in statuses:
        if page_status_apply(page=page, drafts=drafts, before=before, work=work.get(page.pk, [])):
            changed.add(page.pk)
    return changed


def _domain_learn_enqueue(event: Event) -> None:
    """A live e-mail from outside the company: its sender's domain may now be learned as a
    customer's alias (`domains_learn`, that domain only), after this compile commits."""
    domain = event.author.rsplit("@", 1)[1].lower() if event.kind == K.EMAIL and "@" in event.author else ""
    if domain and domain_learnable(tenant=event.tenant, domain=domain):
        tenant_id = event.tenant_id
        transaction.on_commit(lambda: async_task("wiki.tasks.domains_learn_task", tenant_id, [domain]))


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
                threads_lock([(event.tenant_id, key) for key in [thread_key, *left]])
                changed = threads_rebuild(
                    tenant=event.tenant, threads=dict.fromkeys([thread_key, *left], event)
                )
                changed |= container_acl_sync(event=event, thread_key=thread_key)
                summaries_enqueue(changed)
                _domain_learn_enqueue(event)
            event.state, event.compiled_at, event.error = Event.State.COMPILED, timezone.now(), ""
            event.save(update_fields=["state", "compiled_at", "error"])
            return event.state
    except Exception as exc:
        log.exception("compiling event %s failed", event_id)
        matchers_forget()  # what the rolled-back compile changed on cached entities
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"[:4000]
        Event.objects.filter(id=event_id).exclude(state=Event.State.COMPILED).update(
            state=Event.State.FAILED, error=error
        )
        return Event.State.FAILED


def relinks_run(notes: list[list], skip=frozenset()) -> None:
    by_tenant: dict[int, list] = defaultdict(list)
    for tenant_id, *note in notes:
        by_tenant[tenant_id].append(note)
    for tenant_id, tenant_notes in sorted(by_tenant.items()):
        entity_relink(tenant_id=tenant_id, notes=tenant_notes, skip=skip)


def threads_recompile(*, tenant_id: int, keys: list[str], batch: Batch | None = None) -> set[int]:
    """Rebuild threads from the inbox together (`threads_rebuild`), inside the caller's
    transaction, after taking their locks; the pages changed."""
    threads = {key: event for key in keys if (event := thread_event(tenant_id=tenant_id, thread_key=key))}
    if not threads:
        return set()
    threads_lock([(tenant_id, key) for key in threads])
    return threads_rebuild(tenant=next(iter(threads.values())).tenant, threads=threads, batch=batch)


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
                summaries_enqueue(threads_recompile(tenant_id=tenant_id, keys=[key]))
                queue += [(n[1], tuple(n[2]), tuple(n[3] or ())) for n in relinks_take()]
            rebuilt += 1
    return rebuilt
