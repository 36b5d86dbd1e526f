"""What a compile reads and decides, before it writes: the items of a thread in their current
state (read from the inbox), the customers and projects they name, and one section draft per
source container for each page the thread belongs on (`thread_plan`).

Deterministic: the result depends only on the set of events in the inbox (see
`wiki.services.compiler`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings

from almanac.search.keyword import StatsBuffer
from connectors.models import Event, Source
from wiki.matching import entity_matcher
from wiki.models import Entity, PageSection, WorkKind
from wiki.services.entities import LINKED_KINDS, entities_from_tags, entity_ensure, entity_seen
from wiki.services.sections import SectionDraft

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


def threads_items(*, tenant_id: int, threads: dict[str, Event]) -> dict[str, list[Item]]:
    """Every item of each thread with all its versions, read after the threads' locks, in
    two queries for all of them. `threads`: thread key → an event of it (whose item belongs
    to it even if no version names the thread: an `item:` thread)."""
    keys = sorted(threads)
    pairs = {(e.source_id, e.external_id) for e in threads.values()}
    pairs |= set(
        Event.objects.filter(tenant_id=tenant_id, thread_key__in=keys).values_list("source_id", "external_id")
    )
    rows = Event.objects.filter(
        tenant_id=tenant_id,
        source_id__in={s for s, _ in pairs},
        external_id__in={x for _, x in pairs},
    ).exclude(kind__in=NO_CONTENT)
    sources = {s.pk: s for s in Source.objects.filter(id__in={s for s, _ in pairs})}
    versions: dict[tuple, list[Event]] = defaultdict(list)
    for row in rows:
        if (row.source_id, row.external_id) in pairs:
            row.source = sources[row.source_id]
            versions[(row.source_id, row.external_id)].append(row)
    found: dict[str, list[Item]] = {key: [] for key in keys}
    for group in versions.values():
        group.sort(key=_order)
        key = _item_thread(group)
        if key not in found:
            continue  # moved to another thread since: it is compiled there
        bases = [e for e in group if e.kind not in NOT_BASE]
        found[key].append(Item(versions=group, current=group[-1], base=bases[-1] if bases else None))
    for items in found.values():
        items.sort(key=lambda item: _order(item.base or item.current))
    return found


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
    tagged = item.current if item.current.tags else base
    found = entities_from_tags(
        tenant=tenant, tags=tagged.tags, matcher=matcher, named_in=named_in, seen_at=tagged.occurred_at
    )
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
def container_visibility(*, tenant_id: int, keys) -> dict[str, bool]:
    """{container key: readable tenant-wide} for the containers whose visibility has been
    observed (`connectors.services.membership.visibility_observe`): the newest observation
    decides, not the thread being compiled, so the wiki is the same in any arrival order."""
    from almanac.models import AccessGroup

    rows = AccessGroup.objects.filter(tenant_id=tenant_id, key__in=list(keys), public__isnull=False)
    return dict(rows.values_list("key", "public"))


def container_acl(*, tenant, container_key: str, public: bool) -> list[str]:
    return sorted({container_key, *([tenant.group_key] if public else [])})
