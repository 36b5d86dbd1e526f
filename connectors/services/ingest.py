"""Ingest: validate a normalized event, store it once, apply its membership, enqueue the compiler."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from datetime import datetime
from typing import NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import Q
from pydantic import ValidationError

from almanac.errors import ApplicationError
from almanac.jsonbody import storable_problem
from almanac.models import AccessGroup, GroupMembership, Tenant
from almanac.services import BUILTIN, group_ensure
from connectors import conf
from connectors.models import Event, MembershipClock, Source
from connectors.schemas import MAX_VERSION, EventIn
from connectors.services.identity import identity_resolve
from connectors.services.sources import source_ensure, source_kind_for_name

MEMBERSHIP_KINDS = {Event.Kind.MEMBERSHIP_ADDED, Event.Kind.MEMBERSHIP_REMOVED}


class Known(NamedTuple):
    """A stored version of an item, as `_version_for` needs it."""

    version: int
    digest: str
    occurred_at: datetime


def _reason(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "event"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def event_validate(payload) -> EventIn:
    """Parse one payload, or raise ApplicationError 422 saying what is wrong."""
    if not isinstance(payload, dict):
        raise ApplicationError("an event must be a JSON object", status_code=422)
    try:
        event = EventIn.model_validate(payload)
    except ValidationError as exc:
        raise ApplicationError(f"invalid event: {_reason(exc)}", status_code=422) from exc
    problem = storable_problem(event.raw, "raw")
    if problem:
        raise ApplicationError(f"invalid event: {problem}", status_code=422)
    if len(json.dumps(event.raw, default=str)) > conf.EVENT_MAX_RAW_BYTES:
        raise ApplicationError("invalid event: raw payload is too large", status_code=422)
    if event.kind in MEMBERSHIP_KINDS and not event.container.members:
        raise ApplicationError(f"invalid event: {event.kind} needs container.members", status_code=422)
    return event


def _check_namespace(*, tenant: Tenant, data: EventIn, kinds: dict | None = None) -> None:
    """A container namespace named after a source kind (slack:, email:, github:, ...) belongs
    to sources of that kind, so one connector can never grant access to another's containers."""
    namespace = data.container.key.split(":", 1)[0]
    if namespace not in Source.Kind.values or namespace == Source.Kind.PUSH:
        return
    kinds = {} if kinds is None else kinds
    if data.source not in kinds:
        existing = (
            Source.objects.filter(tenant=tenant, name=data.source).values_list("kind", flat=True).first()
        )
        kinds[data.source] = existing or source_kind_for_name(data.source)
    kind = kinds[data.source]
    if kind != namespace:
        raise ApplicationError(
            f"invalid event: container.key namespace '{namespace}:' belongs to {namespace} sources, "
            f"and source '{data.source}' is of kind {kind}",
            status_code=422,
        )


def _tags(data: EventIn) -> dict:
    return {k: v for k, v in data.tags.model_dump().items() if v not in (None, "", [])}


def _group(*, tenant: Tenant, container, cache: dict) -> AccessGroup:
    group = cache.get(container.key)
    if group is None:
        group = group_ensure(
            tenant=tenant, key=container.key, kind=AccessGroup.Kind.SOURCE, name=container.name, builtin=False
        )
        if container.name and group.name != container.name:
            group.name = container.name
            group.save(update_fields=["name"])
        cache[container.key] = group
    return group


def _origin(source: Source) -> str:
    return source.name[: GroupMembership._meta.get_field("origin").max_length]


class Clocks(NamedTuple):
    list_at: datetime | None  # the latest full member list this source applied to the group
    list_digest: str  # ... and which list it was
    users: dict[int, datetime]  # user id -> the latest added/removed of that person (any source)


def _clocks(*, group: AccessGroup, origin: str) -> Clocks:
    list_at, list_digest, users = None, "", {}
    rows = MembershipClock.objects.filter(group=group).filter(Q(user__isnull=False) | Q(origin=origin))
    for user_id, at, digest in rows.values_list("user_id", "at", "members_digest"):
        if user_id is None:
            list_at, list_digest = at, digest
        else:
            users[user_id] = max(at, users.get(user_id, at))
    return Clocks(list_at, list_digest, users)


def _members_digest(members: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted({m.lower() for m in members})).encode()).hexdigest()[:32]


def _membership_apply(
    *, tenant: Tenant, source: Source, data: EventIn, cache: dict, repeated: bool = False
) -> None:
    """Apply the event's membership to the container's access group, right away.

    Content event: `members` is the container's full membership and replaces what this
    source granted before (grants by admins, other sources and the directory stay).
    membership_added / membership_removed: only the listed people change.
    Last write by event time wins: a member list older than the latest one this source
    applied changes nothing, and nobody's membership changes on information older than the
    latest added/removed of that person (a late join cannot undo a later leave).
    `repeated`: a duplicate event; its list counts only if it differs from the last applied.
    """
    if data.container.members is None:
        return
    group = _group(tenant=tenant, container=data.container, cache=cache)
    origin, at, full = _origin(source), data.occurred_at, data.kind not in MEMBERSHIP_KINDS
    clocks = _clocks(group=group, origin=origin)
    if clocks.list_at is not None and at < clocks.list_at:
        return
    digest = _members_digest(data.container.members) if full else ""
    if repeated and digest == clocks.list_digest:
        return  # the list applied last, read again: nothing new (a removal by hand stays)
    people = identity_resolve(tenant=tenant, source_kind=source.kind, members=data.container.members)
    wanted = {u.pk for u in people if at >= clocks.users.get(u.pk, at)}
    if not full:
        added = data.kind == Event.Kind.MEMBERSHIP_ADDED
        _members_change(group=group, origin=origin, user_ids=wanted, added=added)
        _user_clocks_advance(group=group, origin=origin, user_ids=wanted, at=at)
        return
    newer = {uid for uid, clock in clocks.users.items() if at < clock}  # left as they are
    existing = dict(GroupMembership.objects.filter(group=group).values_list("user_id", "origin"))
    _members_change(group=group, origin=origin, user_ids=wanted - set(existing), added=True)
    dropped = {uid for uid, by in existing.items() if by == origin and uid not in wanted | newer}
    _members_change(group=group, origin=origin, user_ids=dropped, added=False)
    _list_clock_set(group=group, origin=origin, at=at, digest=digest, exists=clocks.list_at is not None)


def _list_clock_set(*, group: AccessGroup, origin: str, at: datetime, digest: str, exists: bool) -> None:
    if exists:  # never back: a concurrent writer may have stored a later list
        clocks = MembershipClock.objects.filter(group=group, origin=origin, user=None, at__lte=at)
        clocks.update(at=at, members_digest=digest)
    else:
        MembershipClock.objects.bulk_create(
            [MembershipClock(group=group, origin=origin, at=at, members_digest=digest)], ignore_conflicts=True
        )


def _user_clocks_advance(*, group: AccessGroup, origin: str, user_ids: set[int], at: datetime) -> None:
    if not user_ids:
        return
    MembershipClock.objects.filter(group=group, origin=origin, user_id__in=user_ids, at__lt=at).update(at=at)
    MembershipClock.objects.bulk_create(
        [MembershipClock(group=group, origin=origin, user_id=uid, at=at) for uid in sorted(user_ids)],
        ignore_conflicts=True,
    )


def _members_change(*, group: AccessGroup, origin: str, user_ids: set[int], added: bool) -> None:
    if not user_ids:
        return
    if added:
        GroupMembership.objects.bulk_create(
            [GroupMembership(user_id=uid, group=group, origin=origin) for uid in sorted(user_ids)],
            ignore_conflicts=True,
        )
    else:  # a removal from the source removes whoever granted it, except the directory
        GroupMembership.objects.filter(group=group, user_id__in=user_ids).exclude(origin=BUILTIN).delete()


def _enqueue_compile(event_id: int) -> None:
    import connectors.services as package  # looked up at call time so tests can patch it

    transaction.on_commit(lambda: package.async_task("wiki.tasks.compile_event_task", event_id))


def _source(*, tenant: Tenant, name: str, cache: dict) -> Source:
    key = ("source", name)
    if key not in cache:
        cache[key] = source_ensure(tenant=tenant, name=name)
    return cache[key]


def _event_new(*, tenant: Tenant, source: Source, data: EventIn) -> Event:
    container = data.container
    event = Event(
        tenant=tenant,
        source=source,
        external_id=data.external_id,
        version=data.version,
        kind=data.kind,
        occurred_at=data.occurred_at,
        container_key=container.key,
        container_name=container.name,
        container_members=container.members,
        container_public=container.public,
        thread_key=data.thread_key,
        author=data.author,
        title=data.title,
        text=data.text,
        tags=_tags(data),
        url=data.url,
        raw=data.raw,
    )
    event.digest = event.content_digest()
    return event


def _version_for(*, event: Event, known: list):
    """The version to store `event` under (an int), or the stored version it repeats.

    `known`: the item's stored versions (anything with version, digest and occurred_at).
    Versions are whole seconds, so two changes within one second arrive under one version:
    a stored version with other content makes this a new version (the next free number),
    unless that content is stored already (a redelivery) or the event is older than the
    item's newest version (an old version re-read with today's content, which that newer
    version holds). Rows stored before digests existed compare equal.
    """
    same = next((k for k in known if k.version == event.version), None)
    if same is None:
        return event.version
    if not same.digest or same.digest == event.digest:
        return same
    repeated = next((k for k in known if k.digest == event.digest), None)
    if repeated is not None:
        return repeated
    if event.occurred_at < max(k.occurred_at for k in known):
        return same
    taken, version = {k.version for k in known}, event.version + 1
    while version in taken:
        version += 1
    return version if version <= MAX_VERSION else same


def _stored(*, tenant: Tenant, source: Source, data: EventIn, event: Event, cache: dict) -> None:
    """What follows a new event: its membership, the container's visibility, the compile."""
    _membership_apply(tenant=tenant, source=source, data=data, cache=cache)
    if not data.container.public:
        from wiki.services.compiler import container_visibility_at_ingest

        container_visibility_at_ingest(event=event)
    _enqueue_compile(event.id)


def _repeated(*, tenant: Tenant, source: Source, data: EventIn, cache: dict) -> None:
    """A duplicate changes nothing, except that a content event's member list is applied
    again: pollers re-read what they hold with the container's current members, and a
    removal must not wait for the next new message. (A repeated added/removed tells nothing new.)"""
    if data.kind not in MEMBERSHIP_KINDS:
        _membership_apply(tenant=tenant, source=source, data=data, cache=cache, repeated=True)


def _store(*, tenant: Tenant, data: EventIn, cache: dict) -> tuple[Event, bool]:
    """Store one validated event, or return the stored one it repeats."""
    source = _source(tenant=tenant, name=data.source, cache=cache)
    event = _event_new(tenant=tenant, source=source, data=data)
    decided = _version_for(
        event=event, known=list(Event.objects.filter(source=source, external_id=data.external_id))
    )
    if not isinstance(decided, int):
        _repeated(tenant=tenant, source=source, data=data, cache=cache)
        return decided, False
    event.version = decided
    try:
        with transaction.atomic():
            event.save(force_insert=True)
    except IntegrityError:  # the same triple stored concurrently: a duplicate
        _repeated(tenant=tenant, source=source, data=data, cache=cache)
        return Event.objects.get(source=source, external_id=data.external_id, version=decided), False
    _stored(tenant=tenant, source=source, data=data, event=event, cache=cache)
    return event, True


@transaction.atomic
def event_ingest(*, tenant: Tenant, payload: dict) -> tuple[Event, bool]:
    """Store one normalized event (API.md shape) and return it with `created`.

    1. validate (ApplicationError 422 with the reason; nothing is written);
    2. a duplicate `(source, external_id, version)` returns the stored event, created=False,
       and changes nothing;
    3. create the Source on first use, store the event, apply its membership to the
       container's AccessGroup (unknown members are recorded, never granted);
    4. after commit, enqueue `wiki.tasks.compile_event_task(event.id)`.
    """
    data = event_validate(payload)
    _check_namespace(tenant=tenant, data=data)
    return _store(tenant=tenant, data=data, cache={})


def event_ingest_batch(*, tenant: Tenant, payloads: list) -> dict:
    """Ingest many events in one transaction; all are validated first, and one bad event
    rejects the whole batch (the error names its index)."""
    if not isinstance(payloads, list):
        raise ApplicationError("'events' must be a list", status_code=422)
    if len(payloads) > conf.EVENT_MAX_BATCH:
        raise ApplicationError(f"a batch may hold at most {conf.EVENT_MAX_BATCH} events", status_code=422)
    parsed, kinds = [], {}
    for index, payload in enumerate(payloads):
        try:
            parsed.append(event_validate(payload))
            _check_namespace(tenant=tenant, data=parsed[-1], kinds=kinds)
        except ApplicationError as exc:
            raise ApplicationError(
                f"events[{index}]: {exc.message}", {"index": index}, status_code=422
            ) from exc
    for attempt in range(3):
        try:
            return _ingest_parsed(tenant=tenant, parsed=parsed)
        except IntegrityError:
            # Another writer stored one of these events meanwhile; the batch rolled back
            # (with its on_commit callbacks) and is read again: it is now a duplicate.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


@transaction.atomic
def _ingest_parsed(*, tenant: Tenant, parsed: list[EventIn]) -> dict:
    """Store a validated batch. A concurrent insert raises IntegrityError: the caller retries
    the whole batch, in which that event is then a duplicate (so no savepoint per event)."""
    accepted = duplicates = 0
    cache: dict = {}  # sources and groups, looked up once per batch
    known = defaultdict(list)  # (source name, external id) -> stored versions
    rows = Event.objects.filter(tenant=tenant, external_id__in={d.external_id for d in parsed})
    for name, external_id, *version in rows.values_list(
        "source__name", "external_id", "version", "digest", "occurred_at"
    ):
        known[(name, external_id)].append(Known(*version))
    for data in parsed:
        source = _source(tenant=tenant, name=data.source, cache=cache)
        event = _event_new(tenant=tenant, source=source, data=data)
        versions = known[(data.source, data.external_id)]
        decided = _version_for(event=event, known=versions)
        if not isinstance(decided, int):
            duplicates += 1
            _repeated(tenant=tenant, source=source, data=data, cache=cache)
            continue
        event.version = decided
        event.save(force_insert=True)
        versions.append(Known(event.version, event.digest, event.occurred_at))
        _stored(tenant=tenant, source=source, data=data, event=event, cache=cache)
        accepted += 1
    return {"accepted": accepted, "duplicates": duplicates}
