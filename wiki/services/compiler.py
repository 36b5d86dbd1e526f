"""The event-driven compiler: one inbox event → the sections of its thread, rebuilt.

Each compile rebuilds the event's whole thread deterministically from the inbox: for
every item of the thread (one `(source, external_id)`), the version with the latest
event time is its current state (last write by event time wins, so an old version that
arrives late changes nothing). Deleted items contribute nothing; recalled e-mails make
their sections stale; closed issues close the project page. Because the result depends
only on the set of events in the inbox, replays, retries and out-of-order delivery all
converge to the same wiki.

Safety: one transaction per event; a per-thread advisory lock is taken before the inbox
is read (so two workers never build a thread from different snapshots) and the pages
are row-locked in id order (so page status/summary writes are serialized per page).
"""

from __future__ import annotations

import hashlib
import logging
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django_q.tasks import async_task

from connectors.models import Event
from wiki.matching import alias_domain, alias_prefix, entity_matcher
from wiki.models import Entity, Page, PageSection, WorkKind
from wiki.services.entities import (
    LINKED_KINDS,
    domains_learn,
    entities_from_tags,
    entity_ensure,
    entity_seen,
    relinks_take,
)
from wiki.services.sections import SectionDraft, embed_mean_prewarm, section_delete, section_write

log = logging.getLogger(__name__)

K = Event.Kind
NO_CONTENT = {K.MEMBERSHIP_ADDED, K.MEMBERSHIP_REMOVED}
NOT_BASE = {K.MESSAGE_DELETED, K.EMAIL_RECALLED, K.ISSUE_CLOSED, *NO_CONTENT}
# Containers that are one thread each make no topic page of their own: a thread of them that
# names no customer or project goes to one page of its kind (readers see only their own).
FALLBACK_TOPICS = {K.EMAIL: "E-mail", K.CALENDAR_EVENT: "Meetings", K.MEETING_NOTE: "Meetings"}
NO_TOPIC_KINDS = {K.EMAIL, K.EMAIL_RECALLED, K.CALENDAR_EVENT}
# Participants whose e-mail domain links an item: the author, and for these kinds the
# container's members (an e-mail's recipients, a meeting's attendees).
PARTICIPANT_KINDS = {K.EMAIL, K.CALENDAR_EVENT, K.MEETING_NOTE}
PREWARM_CHUNK = 256
BATCH = 500  # events per batch compile (compile_pending, rebuilds)


@dataclass
class Item:
    """One source item (all versions of one external id) in its current state."""

    versions: list[Event]
    current: Event
    base: Event | None  # the latest version that carries content

    @property
    def deleted(self) -> bool:
        return self.current.kind == K.MESSAGE_DELETED or self.base is None

    @property
    def recalled(self) -> bool:
        return self.current.kind == K.EMAIL_RECALLED

    def first(self, attr: str) -> str:
        """The attribute from the current version, else the latest version that has it."""
        for event in [self.current, *sorted(self.versions, key=_order, reverse=True)]:
            value = getattr(event, attr)
            if value:
                return value
        return ""


def _order(event: Event):
    return (event.occurred_at, event.version, event.id)


def thread_of(event: Event) -> str:
    """The thread of an event: its own key, else the newest one of its item's other versions."""
    if event.thread_key:
        return event.thread_key
    other = (
        Event.objects.filter(source_id=event.source_id, external_id=event.external_id)
        .exclude(thread_key="")
        .order_by("-version", "-id")
        .values_list("thread_key", flat=True)
        .first()
    )
    return other or f"item:{event.source.name}:{event.external_id}"


def _item_thread(group: list[Event]) -> str:
    """The thread an item is in now: its newest version that names one (an item moved to
    another thread or channel leaves the old one)."""
    for version in sorted(group, key=_order, reverse=True):
        if version.thread_key:
            return version.thread_key
    return f"item:{group[0].source.name}:{group[0].external_id}"


def threads_left(*, event: Event, thread_key: str) -> list[str]:
    """Threads that older versions of the event's item named and that hold sections: the
    item has moved from them, so they are rebuilt without it."""
    named = (
        Event.objects.filter(source_id=event.source_id, external_id=event.external_id)
        .exclude(thread_key__in=["", thread_key])
        .values_list("thread_key", flat=True)
        .distinct()
    )
    held = PageSection.objects.filter(tenant_id=event.tenant_id, thread_key__in=list(named))
    return sorted(set(held.values_list("thread_key", flat=True)))


def _lock_thread(tenant_id: int, thread_key: str) -> None:
    digest = int.from_bytes(hashlib.sha256(thread_key.encode()).digest()[:4], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [tenant_id, digest])


def thread_items(*, event: Event, thread_key: str) -> list[Item]:
    """Every item of the thread with all its versions, read after the thread lock."""
    keyed = Event.objects.filter(tenant_id=event.tenant_id).filter(
        Q(thread_key=thread_key) | Q(source_id=event.source_id, external_id=event.external_id)
    )
    pairs = set(keyed.values_list("source_id", "external_id"))
    if thread_key.startswith("item:"):
        pairs.add((event.source_id, event.external_id))
    versions: dict[tuple, list[Event]] = defaultdict(list)
    rows = Event.objects.filter(
        tenant_id=event.tenant_id,
        source_id__in={s for s, _ in pairs},
        external_id__in={x for _, x in pairs},
    ).select_related("source")
    for row in rows:
        if (row.source_id, row.external_id) in pairs and row.kind not in NO_CONTENT:
            versions[(row.source_id, row.external_id)].append(row)
    items = []
    for group in versions.values():
        group.sort(key=_order)
        if _item_thread(group) != thread_key:
            continue  # moved to another thread since: it is compiled there
        bases = [e for e in group if e.kind not in NOT_BASE]
        items.append(Item(versions=group, current=group[-1], base=bases[-1] if bases else None))
    items.sort(key=lambda item: _order(item.base or item.current))
    return items


def item_entities(*, tenant, item: Item, matcher, public: bool | None = None) -> list[Entity]:
    """The customers and projects an item is about:

    1. its tags (created if new; the name is then known where the item is);
    2. names in its title and text: linked wherever they are, since its readers read the
       name, which is from then on known there (`entity_seen`);
    3. aliases in the text, the e-mail domain of its author or participants, a ticket prefix
       (`GLX-123`): linked only where every reader of the item may know the entity's name
       (`Entity.name_known_to`), since the page they would see it on is titled with it.

    `public`: the container's observed visibility (None: the item's own)."""
    base = item.base
    container = item.first("container_key")
    if public is None:
        public = item.current.container_public if item.current.container_key else base.container_public
    acl = (
        container_acl(tenant=tenant, container_key=container, public=public)
        if container
        else [tenant.group_key]
    )
    named_in = tenant.group_key if public or not container else container
    tags = item.current.tags or base.tags
    found = entities_from_tags(tenant=tenant, tags=tags, matcher=matcher, named_in=named_in)
    text = f"{base.title}\n{base.text}"
    for entity, by_name in matcher.find_matches(text):
        if entity.kind not in LINKED_KINDS:
            continue
        if by_name:
            entity_seen(entity=entity, named_in=named_in)
            found.append(entity)
        elif entity.name_known_to(acl):
            found.append(entity)
    addresses = [item.first("author")]
    if base.kind in PARTICIPANT_KINDS:
        addresses += item.current.container_members or base.container_members or []
    found += [
        e
        for e in matcher.by_addresses(addresses) + matcher.by_tickets(text)
        if e.kind in LINKED_KINDS and e.name_known_to(acl)
    ]
    return list({e.pk: e for e in found}.values())


def _topic_entity(*, tenant, item: Item) -> Entity | None:
    """The page of a thread that names no customer or project: its channel's, else the one
    page of its kind (e-mail, meetings)."""
    name = "" if item.base.kind in NO_TOPIC_KINDS else item.first("container_name").strip()
    name = name or FALLBACK_TOPICS.get(item.base.kind, "")
    if not name:
        return None
    return entity_ensure(tenant=tenant, kind=Entity.Kind.TOPIC, name=name)


def _line(item: Item) -> str:
    base = item.base
    text = (base.text or "").strip()[: settings.WIKI_ITEM_MAX_CHARS]
    if base.title and base.kind not in {K.MESSAGE, K.MESSAGE_CHANGED}:
        text = f"{base.title}: {text}" if text else base.title
    marks = []
    if item.current.kind == K.ISSUE_CLOSED:
        marks.append("[closed]")
    if item.recalled:
        marks.append("[recalled]")
    author = item.first("author") or "unknown"
    return " ".join([f"[{base.occurred_at:%Y-%m-%d}] {author}:", text, *marks])


def _draft(
    *, tenant, thread_key: str, container_key: str, items: list[Item], public: bool | None = None
) -> SectionDraft:
    """`public`: the container's observed visibility (None: not observed, the thread's
    latest item says)."""
    latest = max(items, key=lambda i: _order(i.current))
    if public is None:
        public = (
            latest.current.container_public if latest.current.container_key else latest.base.container_public
        )
    acl = [container_key] + ([tenant.group_key] if public else [])
    recalls = sorted(i.current.id for i in items if i.recalled)
    content = "\n".join(_line(i) for i in items)[: settings.WIKI_SECTION_MAX_CHARS]
    title = next((i.base.title for i in items if i.base.title), "") or latest.first("container_name")
    work_kind, work_open, work_at = _work(items)
    return SectionDraft(
        work_kind=work_kind,
        work_open=work_open,
        work_at=work_at,
        thread_key=thread_key,
        container_key=container_key,
        container_name=latest.first("container_name"),
        title=title,
        content=content,
        occurred_at=max(i.base.occurred_at for i in items),
        acl=sorted(set(acl)),
        authors=sorted({a.lower() for i in items if (a := i.first("author"))}),
        event_ids=sorted(e.id for i in items for e in i.versions),
        source_list=[
            {
                "source": i.base.source.name,
                "url": i.first("url"),
                "occurred_at": i.base.occurred_at.isoformat(),
                "ref": i.base.external_id,
            }
            for i in items
        ],
        recall_event_ids=recalls,
        stale_reason="e-mail recalled by its sender" if recalls else "",
        embed_texts=[f"{i.base.title}\n{i.base.text}".strip() for i in items],
    )


WORK_KINDS = {K.ISSUE: WorkKind.ISSUE, K.PULL_REQUEST: WorkKind.PULL_REQUEST}


def _work(items: list[Item]) -> tuple[str, bool | None, object]:
    """The thread's issue or PR (its earliest such item; comments are messages): its kind,
    whether it is open (its newest version is not `issue_closed`) and that version's time."""
    for item in items:  # oldest first
        if item.base.kind in WORK_KINDS:
            return WORK_KINDS[item.base.kind], item.current.kind != K.ISSUE_CLOSED, item.current.occurred_at
    return "", None, None


class StatsBuffer:
    """The keyword statistics (`almanac.search.keyword`) of a batch's section writes, summed
    and written once: one statement for the terms and one for the corpus size per tenant and
    corpus, instead of two per section. Same `stats_apply` signature as the keyword module."""

    def __init__(self) -> None:
        self.df: dict[tuple[int, str], Counter] = defaultdict(Counter)
        self.size: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])

    def stats_apply(self, *, tenant_id: int, corpus: str, old: dict | None, new: dict | None) -> None:
        old_terms, new_terms = set((old or {}).get("tf", {})), set((new or {}).get("tf", {}))
        df = self.df[(tenant_id, corpus)]
        df.update(new_terms - old_terms)
        df.subtract(old_terms - new_terms)
        size = self.size[(tenant_id, corpus)]
        size[0] += (new is not None) - (old is not None)
        size[1] += (new or {}).get("doc_len", 0) - (old or {}).get("doc_len", 0)

    def flush(self) -> None:
        from almanac.models import CorpusStat, TermStat

        terms_table, corpus_table = TermStat._meta.db_table, CorpusStat._meta.db_table
        with connection.cursor() as cursor:
            for (tenant_id, corpus), df in sorted(self.df.items()):
                terms = sorted(t for t, n in df.items() if n)  # sorted: concurrent writers never deadlock
                if not terms:
                    continue
                cursor.execute(
                    f"""INSERT INTO {terms_table} (tenant_id, corpus, term, df)
                        SELECT %s, %s, t, d FROM unnest(%s::text[], %s::int[]) AS u(t, d)
                        ON CONFLICT (tenant_id, corpus, term)
                        DO UPDATE SET df = GREATEST(0, {terms_table}.df + EXCLUDED.df)""",
                    [tenant_id, corpus, terms, [df[t] for t in terms]],
                )
                gone = [t for t in terms if df[t] < 0]
                if gone:  # terms no document holds any more go (as keyword.stats_apply does)
                    cursor.execute(
                        f"DELETE FROM {terms_table} WHERE tenant_id = %s AND corpus = %s "
                        "AND term = ANY(%s::text[]) AND df <= 0",
                        [tenant_id, corpus, gone],
                    )
            for (tenant_id, corpus), (docs, length) in sorted(self.size.items()):
                if docs or length:
                    cursor.execute(
                        f"""INSERT INTO {corpus_table} (tenant_id, corpus, docs, total_len)
                            VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id, corpus) DO UPDATE SET
                              docs = GREATEST(0, {corpus_table}.docs + EXCLUDED.docs),
                              total_len = GREATEST(0, {corpus_table}.total_len + EXCLUDED.total_len)""",
                        [tenant_id, corpus, docs, length],
                    )
        self.df.clear()
        self.size.clear()


@dataclass
class Batch:
    """What a batch compile reads once instead of once per thread: the tenant's entity
    matcher (entities made in this process are seen at once; made elsewhere, within
    `matcher_age` seconds) and the containers' observed visibility."""

    matcher_age: float = 30.0
    visibility: dict[str, bool | None] = field(default_factory=dict)
    stats: StatsBuffer | None = None

    def container_visibility(self, *, tenant_id: int, keys) -> dict[str, bool]:
        missing = [k for k in keys if k not in self.visibility]
        if missing:
            found = container_visibility(tenant_id=tenant_id, keys=missing)
            self.visibility.update({k: found.get(k) for k in missing})
        return {k: self.visibility[k] for k in keys if self.visibility[k] is not None}


def thread_plan(
    *, tenant, thread_key: str, items: list[Item], batch: Batch | None = None
) -> dict[int, tuple[Entity, list[SectionDraft]]]:
    """page entity id → (entity, drafts): one draft per source container of the thread.

    A thread that spans containers (pushed events may share a thread key) puts a
    container's draft on an entity's page only if that container's items named the entity
    or its readers may know the name: a private container's tag must not title a page
    that a public container's draft makes visible to the whole tenant."""
    # entities made by other workers count
    matcher = entity_matcher(tenant.pk, max_age=batch.matcher_age if batch else 0)
    live = [i for i in items if not i.deleted]
    by_container: dict[str, list[Item]] = defaultdict(list)
    for item in live:
        by_container[item.first("container_key")].append(item)
    keys = [key for key in by_container if key]
    visibility = (batch or Batch()).container_visibility(tenant_id=tenant.pk, keys=keys)
    entities: dict[int, Entity] = {}
    named_by: dict[int, set[str]] = defaultdict(set)  # entity → containers whose items named it
    for item in live:
        key = item.first("container_key")
        for entity in item_entities(tenant=tenant, item=item, matcher=matcher, public=visibility.get(key)):
            entities[entity.pk] = entity
            named_by[entity.pk].add(key)
    if live and not entities:
        topic = _topic_entity(tenant=tenant, item=live[0])
        if topic is not None:
            entities[topic.pk] = topic
            named_by[topic.pk].update(by_container)
    drafts = [
        _draft(
            tenant=tenant, thread_key=thread_key, container_key=key, items=group, public=visibility.get(key)
        )
        for key, group in sorted(by_container.items())
        if key
    ]
    return {
        pk: (
            entity,
            [d for d in drafts if d.container_key in named_by[pk] or entity.name_known_to(d.acl)],
        )
        for pk, entity in entities.items()
    }


# The reason on a page's history row for a status change: it says no more than the row's
# hidden fields (wiki.admin hides those rows from staff who are not superusers).
STATUS_REASON = "issue status"


def page_status_apply(*, page: Page, drafts: list[SectionDraft], before: dict[str, tuple]) -> bool:
    """Refresh a page's stored status from its open work (every non-stale section's issue or
    PR: open if any is open, closed if all are; a page without any keeps its status), the tenant-wide value the
    admin shows; readers get theirs counted from the sections they may see
    (`wiki.selectors.page_work_status`). A manual status gives way when this thread's
    issue/PR changed (opened, closed, reopened) at an event time after it was set.

    `before`: {container key: (work_kind, work_open)} of the page's sections of this thread
    before the rebuild. Returns whether the page changed."""
    had_work = any(kind for kind, _ in before.values())
    if not (had_work or any(d.work_kind for d in drafts)):
        return False
    fields = []
    moved = [d for d in drafts if d.work_kind and before.get(d.container_key) != (d.work_kind, d.work_open)]
    if page.status_manual and any(d.work_at and d.work_at > page.status_manual_at for d in moved):
        page.status_manual, page.status_manual_at, page.status_manual_by = "", None, ""
        fields += ["status_manual", "status_manual_at", "status_manual_by"]
    work = list(
        page.sections.filter(stale=False)
        .exclude(work_kind="")
        .order_by("-occurred_at", "-id")
        .values_list("work_open", "occurred_at", "container_key")
    )
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


def thread_rebuild(*, event: Event, thread_key: str | None = None, batch: Batch | None = None) -> set[int]:
    """Steps 1–5 of a compile, inside the caller's transaction; returns the changed page ids.

    1. lock the thread, 2. read its items from the inbox, 3. resolve their entities,
    4. lock the affected pages in id order, 5. write/delete sections and page status.
    `thread_key`: another thread than the event's (one its item has left).
    """
    tenant = event.tenant
    thread_key = thread_key or thread_of(event)
    _lock_thread(tenant.pk, thread_key)
    items = thread_items(event=event, thread_key=thread_key)
    plan = thread_plan(tenant=tenant, thread_key=thread_key, items=items, batch=batch)
    existing = list(PageSection.objects.filter(tenant=tenant, thread_key=thread_key))
    page_ids = {s.page_id for s in existing} | set(
        Page.objects.filter(entity_id__in=plan).values_list("id", flat=True)
    )
    pages = list(Page.objects.select_for_update().filter(id__in=page_ids).order_by("id"))
    reason = f"event {event.id} ({event.kind})"
    changed: set[int] = set()
    for page in pages:
        drafts = plan.get(page.entity_id, (None, []))[1]
        keep = {d.container_key for d in drafts}
        mine = {s.container_key: s for s in existing if s.page_id == page.pk}
        before = {key: (s.work_kind, s.work_open) for key, s in mine.items()}
        for draft in drafts:
            current = mine.get(draft.container_key)
            stats = batch.stats if batch else None
            if section_write(page=page, draft=draft, reason=reason, existing=current, stats=stats)[1]:
                changed.add(page.pk)
        for section in existing:
            if section.page_id == page.pk and section.container_key not in keep:
                section_delete(section=section, reason=reason, stats=batch.stats if batch else None)
                changed.add(page.pk)
        if page_status_apply(page=page, drafts=drafts, before=before):
            changed.add(page.pk)
    return changed


def container_visibility(*, tenant_id: int, keys) -> dict[str, bool]:
    """{container key: readable tenant-wide} for the containers whose visibility has been
    observed (`connectors.services.membership.visibility_observe`): the newest observation
    decides, not the thread being compiled, so the wiki is the same in any arrival order."""
    from almanac.models import AccessGroup

    rows = AccessGroup.objects.filter(tenant_id=tenant_id, key__in=list(keys), public__isnull=False)
    return dict(rows.values_list("key", "public"))


def container_acl(*, tenant, container_key: str, public: bool) -> list[str]:
    return sorted({container_key, *([tenant.group_key] if public else [])})


def container_acl_apply(*, tenant, container_key: str, public: bool, reason: str) -> set[int]:
    """Every section of the container gets the ACL its visibility says; the pages changed."""
    acl = container_acl(tenant=tenant, container_key=container_key, public=public)
    sections = PageSection.objects.filter(tenant_id=tenant.pk, container_key=container_key).exclude(acl=acl)
    changed = set()
    for section in sections.select_for_update(of=("self",)).order_by("id"):
        section.acl = acl
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
                for key in sorted([thread_key, *left]):  # every lock in one order: no deadlock
                    _lock_thread(event.tenant_id, key)
                changed = thread_rebuild(event=event)
                for key in left:
                    changed |= thread_rebuild(event=event, thread_key=key)
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
    compiled = 0
    for start in range(0, len(ids), BATCH):
        compiled += compile_batch(ids[start : start + BATCH])
        if progress is not None:
            progress(min(start + BATCH, len(ids)), len(ids))
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


def _prewarm_embeddings(event_ids: list[int]) -> None:
    """Embed a backlog's item texts in batches (≈5x cheaper per text than one by one)."""
    rows = Event.objects.filter(id__in=event_ids).exclude(kind__in=NOT_BASE).values_list("title", "text")
    texts = [f"{title}\n{text}".strip() for title, text in rows]
    for start in range(0, len(texts), PREWARM_CHUNK):
        embed_mean_prewarm(texts[start : start + PREWARM_CHUNK])


def compile_batch(event_ids: list[int]) -> int:
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
    _prewarm_embeddings(event_ids)
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
        entities_from_tags(tenant=tenant, tags=event.tags, matcher=matcher, named_in=named_in)


def _batch_rebuild(events: list[Event], *, batch: Batch) -> tuple[set[str], set[int]]:
    """Rebuild each thread of the events (and each they left) once; (thread keys, pages changed)."""
    threads: dict[tuple[int, str], Event] = {}
    keys = {event.id: thread_of(event) for event in events}
    left = _batch_threads_left(events, keys)
    for event in events:
        threads.setdefault((event.tenant_id, keys[event.id]), event)
        for key in left.get(event.id, []):
            threads.setdefault((event.tenant_id, key), event)
    for tenant_id, key in sorted(threads):  # every lock in one order: no deadlock
        _lock_thread(tenant_id, key)
    changed: set[int] = set()
    for (_, key), event in sorted(threads.items()):
        changed |= thread_rebuild(event=event, thread_key=key, batch=batch)
    newest: dict[tuple[int, str], Event] = {}
    for event in events:  # event-time order: each container's newest event decides
        newest[(event.tenant_id, event.container_key)] = event
    for event in newest.values():
        changed |= container_acl_sync(event=event, thread_key=thread_of(event))
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


def relink_threads(*, tenant_id: int, terms: list[str], containers: list[str] | None = None) -> list[str]:
    """The compiled threads that may name one of `terms` (an entity's name or aliases), found
    through the sections' keyword index (every token of a term; a ticket prefix as a token
    prefix), within `containers` (section ACL keys) if given. E-mail domains are looked up
    in the inbox's e-mail and meeting participants (a scan of those, for an alias change)."""
    clauses, domains = [], []
    for term in terms:
        if domain := alias_domain(term):
            domains.append(domain)
        elif prefix := alias_prefix(term):
            clauses.append(f"'{prefix.lower()}-':*")
        else:
            clauses += _term_clauses(term)
    keys: set[str] = set()
    sections = PageSection.objects.filter(tenant_id=tenant_id)
    if containers:
        sections = sections.filter(acl__overlap=containers)
    if clauses:
        match = RawSQL("search_vector @@ %s::tsquery", [" | ".join(clauses)], output_field=BooleanField())
        keys |= set(sections.filter(match).values_list("thread_key", flat=True).distinct())
    for domain in domains:
        keys |= _threads_with_domain(tenant_id=tenant_id, domain=domain, containers=containers)
    return sorted(keys)


def _quoted(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _term_clauses(term: str) -> list[str]:
    """tsquery clauses that find a term in sections indexed before it was a known word: its
    tokens now (a Chinese name is one word once the segmenter knows it, its parts too), its
    parts alone, or its characters (how it may have been cut before)."""
    from almanac.search.text import is_cjk, segment

    tokens = [t for t in segment(term) if t]
    if not tokens:
        return []
    clauses = ["(" + " & ".join(_quoted(t) for t in tokens) + ")"]
    if is_cjk(term):
        longest = max(tokens, key=len)
        parts = [t for t in tokens if t != longest]
        clauses.append(_quoted(longest))
        if parts:
            clauses.append("(" + " & ".join(_quoted(t) for t in parts) + ")")
        chars = sorted({c for t in tokens for c in t if is_cjk(c)})
        clauses.append("(" + " & ".join(_quoted(c) for c in chars) + ")")
    return clauses


def _threads_with_domain(*, tenant_id: int, domain: str, containers) -> set[str]:
    events = Event.objects.filter(tenant_id=tenant_id, kind__in=PARTICIPANT_KINDS | {K.MESSAGE})
    if containers:
        events = events.filter(container_key__in=containers)
    pattern = "%@" + domain.replace("%", "").replace("_", "\\_")
    members = RawSQL(
        "EXISTS (SELECT 1 FROM unnest(container_members) m WHERE lower(m) LIKE %s)",
        [pattern],
        output_field=BooleanField(),
    )
    hits = events.filter(Q(author__iendswith="@" + domain) | Q(members))
    return {thread_of(e) for e in hits.select_related("source")}


def thread_event(*, tenant_id: int, thread_key: str) -> Event | None:
    """An inbox event of the thread (its newest), to rebuild the thread from."""
    events = Event.objects.filter(tenant_id=tenant_id).exclude(kind__in=NO_CONTENT)
    event = events.filter(thread_key=thread_key).order_by("-occurred_at", "-id").first()
    if event is None and thread_key.startswith("item:"):
        _, source, external_id = thread_key.split(":", 2)
        event = events.filter(source__name=source, external_id=external_id).order_by("-id").first()
    return event


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
