"""Ingest: validate a normalized event, store it once, apply its membership, enqueue the compiler."""

from __future__ import annotations

import json

from django.db import IntegrityError, transaction
from pydantic import ValidationError

from almanac.errors import ApplicationError
from almanac.jsonbody import storable_problem
from almanac.models import AccessGroup, GroupMembership, Tenant
from almanac.services import BUILTIN, group_ensure
from connectors import conf
from connectors.models import Event, Source
from connectors.schemas import EventIn
from connectors.services.identity import identity_resolve
from connectors.services.sources import source_ensure, source_kind_for_name

MEMBERSHIP_KINDS = {Event.Kind.MEMBERSHIP_ADDED, Event.Kind.MEMBERSHIP_REMOVED}


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


def _membership_apply(*, tenant: Tenant, source: Source, data: EventIn, cache: dict) -> None:
    """Apply the event's membership to the container's access group, right away.

    Content event: `members` is the container's full membership and replaces what this
    source granted before (grants by admins, other sources and the directory stay).
    membership_added / membership_removed: only the listed people change.
    """
    if data.container.members is None:
        return
    group = _group(tenant=tenant, container=data.container, cache=cache)
    wanted = {
        u.pk for u in identity_resolve(tenant=tenant, source_kind=source.kind, members=data.container.members)
    }
    memberships = GroupMembership.objects.filter(group=group)
    origin = source.name[: GroupMembership._meta.get_field("origin").max_length]
    if data.kind == Event.Kind.MEMBERSHIP_REMOVED:
        if wanted:
            memberships.filter(user_id__in=wanted).exclude(origin=BUILTIN).delete()
        return
    existing = dict(memberships.values_list("user_id", "origin"))
    missing = wanted - set(existing)
    if missing:
        GroupMembership.objects.bulk_create(
            [GroupMembership(user_id=uid, group=group, origin=origin) for uid in missing],
            ignore_conflicts=True,
        )
    if data.kind == Event.Kind.MEMBERSHIP_ADDED:
        return
    dropped = [uid for uid, granted_by in existing.items() if granted_by == origin and uid not in wanted]
    if dropped:
        memberships.filter(user_id__in=dropped, origin=origin).delete()


def _enqueue_compile(event_id: int) -> None:
    import connectors.services as package  # looked up at call time so tests can patch it

    transaction.on_commit(lambda: package.async_task("wiki.tasks.compile_event_task", event_id))


def _source(*, tenant: Tenant, name: str, cache: dict) -> Source:
    key = ("source", name)
    if key not in cache:
        cache[key] = source_ensure(tenant=tenant, name=name)
    return cache[key]


def _store(*, tenant: Tenant, data: EventIn, cache: dict, checked: bool = False) -> tuple[Event, bool]:
    """Store one validated event. `checked`: the caller knows it is not stored and retries
    its whole transaction on a concurrent insert, so no savepoint is needed here."""
    source = _source(tenant=tenant, name=data.source, cache=cache)
    if not checked:
        existing = Event.objects.filter(
            source=source, external_id=data.external_id, version=data.version
        ).first()
        if existing is not None:
            return existing, False
    container = data.container
    try:
        with transaction.atomic(savepoint=not checked):
            event = Event.objects.create(
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
    except IntegrityError:  # the same triple stored concurrently: a duplicate
        if checked:
            raise
        return Event.objects.get(source=source, external_id=data.external_id, version=data.version), False
    _membership_apply(tenant=tenant, source=source, data=data, cache=cache)
    if not container.public:
        from wiki.services.compiler import container_visibility_at_ingest

        container_visibility_at_ingest(event=event)
    _enqueue_compile(event.id)
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
    accepted = duplicates = 0
    cache: dict = {}  # sources and groups, looked up once per batch
    stored = set(
        Event.objects.filter(tenant=tenant, external_id__in={d.external_id for d in parsed}).values_list(
            "source__name", "external_id", "version"
        )
    )
    for data in parsed:
        triple = (data.source, data.external_id, data.version)
        if triple in stored:
            duplicates += 1
            continue
        _store(tenant=tenant, data=data, cache=cache, checked=True)
        stored.add(triple)
        accepted += 1
    return {"accepted": accepted, "duplicates": duplicates}
