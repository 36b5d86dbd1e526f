"""Ingest: validate a normalized event, store it once, apply its membership, announce it
(`connectors.signals`; the wiki compiles it, skills hear of a new document)."""

from __future__ import annotations

import json
import random
import time
from collections import defaultdict
from datetime import datetime
from typing import NamedTuple

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from pydantic import ValidationError

from almanac.errors import ApplicationError
from almanac.jsonbody import storable_problem
from almanac.models import Tenant
from connectors.models import Event, Source
from connectors.schemas import MAX_VERSION, EventIn
from connectors.services.membership import (
    MEMBERSHIP_KINDS,
    clocks_flush,
    groups_lock,
    membership_apply,
    visibility_observe,
)
from connectors.services.sources import source_ensure, source_kind_for_name
from connectors.signals import container_visibility_changed, event_ingested
from skills.events import actor_fields, bounded
from skills.signals import domain_event

DEADLOCK = "40P01"  # SQLSTATE deadlock_detected
ATTEMPTS = 3  # of a batch or poll page that meets a concurrent writer


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
    if len(json.dumps(event.raw, default=str)) > settings.CONNECTOR_EVENT_MAX_RAW_BYTES:
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


def event_groups_lock(*, tenant: Tenant, payloads: list) -> None:
    """Lock, in key order, the groups of these payloads' containers (their memberships and
    visibility are written), before they are stored one by one in this transaction
    (`ingest_all` in a poll page): each event then finds its group locked already, so the
    page takes its locks in key order, not in the order of its items. Payloads that will
    be refused are passed over."""
    containers, kinds = [], {}
    for payload in payloads:
        if not (isinstance(payload, dict) and isinstance(payload.get("container"), dict)):
            continue
        try:
            data = event_validate(payload)
            _check_namespace(tenant=tenant, data=data, kinds=kinds)
        except ApplicationError:
            continue
        containers.append(data.container)
    groups_lock(tenant=tenant, containers=containers, cache={})


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


def _stored(
    *, tenant: Tenant, source: Source, data: EventIn, event: Event, cache: dict, observed_at=None
) -> None:
    """What follows a new event: its membership, the container's visibility, the
    announcements (the wiki compiles it after commit; a meeting note is a new document)."""
    membership_apply(tenant=tenant, source=source, data=data, cache=cache, observed_at=observed_at)
    _visibility(tenant=tenant, data=data, cache=cache, observed_at=observed_at, event_id=event.id)
    event_ingested.send(sender=Event, tenant_id=tenant.pk, event_id=event.id)
    if event.kind == Event.Kind.MEETING_NOTE:
        payload = meeting_note_payload(tenant=tenant, source=source, event=event)
        domain_event.send(sender=Event, event="document.uploaded", payload=payload, tenant_id=tenant.pk)


def meeting_note_payload(*, tenant: Tenant, source: Source, event: Event) -> dict:
    """`document.uploaded` for a meeting note a connector brought: its text (bounded) and
    its readers, those of its container (everyone in the tenant too when it is public), as
    the wiki gives its sections. No user of ours acted."""
    text, truncated = bounded(event.text)
    public = event.container_public
    acl = sorted({event.container_key, *([tenant.group_key] if public else [])})
    return {
        "event_id": f"connector-event:{event.id}",
        "connector_event_id": event.id,
        "source_id": source.pk,
        "source": source.name,
        "filename": event.title or event.external_id,
        "format": "meeting_note",
        **actor_fields(None),
        "author": event.author,
        "acl": acl,
        "readers": f"everyone in {tenant.slug}"
        if public
        else f"the members of {event.container_name or event.container_key}",
        "occurred_at": event.occurred_at.isoformat(),
        "url": event.url,
        "text": text,
        "text_truncated": truncated,
    }


def _visibility(*, tenant: Tenant, data: EventIn, cache: dict, observed_at=None, event_id=None) -> None:
    """A container that turned private stops being readable tenant-wide when the event is
    stored, not when a worker compiles it: a revocation waits for no queue."""
    if visibility_observe(tenant=tenant, data=data, cache=cache, observed_at=observed_at, event_id=event_id):
        container_visibility_changed.send(
            sender=Event, tenant=tenant, container_key=data.container.key, public=data.container.public
        )


def _repeated(*, tenant: Tenant, source: Source, data: EventIn, cache: dict, observed_at=None) -> None:
    """A duplicate changes nothing, except that a content event's member list and visibility
    are applied again: pollers re-read what they hold with the container as it is now, and a
    removal or a channel turned private must not wait for the next new message. (A repeated
    added/removed tells nothing new.)"""
    if data.kind not in MEMBERSHIP_KINDS:
        membership_apply(
            tenant=tenant, source=source, data=data, cache=cache, observed_at=observed_at, repeated=True
        )
        _visibility(tenant=tenant, data=data, cache=cache, observed_at=observed_at)


def _store(*, tenant: Tenant, data: EventIn, cache: dict, observed_at=None) -> tuple[Event, bool]:
    """Store one validated event, or return the stored one it repeats."""
    source = _source(tenant=tenant, name=data.source, cache=cache)
    groups_lock(tenant=tenant, containers=[data.container], cache=cache)  # before any other write
    event = _event_new(tenant=tenant, source=source, data=data)
    decided = _version_for(
        event=event, known=list(Event.objects.filter(source=source, external_id=data.external_id))
    )
    after = {"tenant": tenant, "source": source, "data": data, "cache": cache, "observed_at": observed_at}
    if not isinstance(decided, int):
        _repeated(**after)
        return decided, False
    event.version = decided
    try:
        with transaction.atomic():
            event.save(force_insert=True)
    except IntegrityError:  # the same triple stored concurrently: a duplicate
        _repeated(**after)
        return Event.objects.get(source=source, external_id=data.external_id, version=decided), False
    _stored(event=event, **after)
    return event, True


@transaction.atomic
def event_ingest(
    *, tenant: Tenant, payload: dict, members_observed_at: datetime | None = None
) -> tuple[Event, bool]:
    """Store one normalized event (the shape of docs/api.md, Connectors) and return it with `created`.

    1. validate (ApplicationError 422 with the reason; nothing is written);
    2. a duplicate `(source, external_id, version)` returns the stored event, created=False,
       and changes nothing (but for a content event's member list, see `_repeated`);
    3. create the Source on first use, store the event, apply its membership to the
       container's AccessGroup (unknown members are recorded, never granted);
    4. announce it (`connectors.signals.event_ingested`: the wiki enqueues its compile
       after commit; a new meeting note also sends `domain_event` "document.uploaded").

    `members_observed_at`: when a poller or importer read the container's member list (the
    start of its poll or import); the list is dated by it, not by the item's time. Without
    it (a push) the list is dated by the event's `occurred_at`.
    """
    data = event_validate(payload)
    _check_namespace(tenant=tenant, data=data)
    cache: dict = {}
    stored = _store(tenant=tenant, data=data, cache=cache, observed_at=members_observed_at)
    clocks_flush(cache)
    return stored


def is_deadlock(exc: BaseException) -> bool:
    """PostgreSQL broke a deadlock by failing this transaction (SQLSTATE 40P01): run it again."""
    return isinstance(exc, OperationalError) and getattr(exc.__cause__, "sqlstate", None) == DEADLOCK


def deadlock_pause(attempt: int) -> None:
    """A short random wait before the next attempt, so the two writers do not meet again."""
    time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))  # noqa: S311 - jitter, not a secret


def event_ingest_batch(
    *, tenant: Tenant, payloads: list, members_observed_at: datetime | None = None
) -> dict:
    """Ingest many events in one transaction; all are validated first, and one bad event
    rejects the whole batch (the error names its index). A batch that still meets a
    concurrent writer after ATTEMPTS tries is refused with a 503 (retry later), never a 500."""
    if not isinstance(payloads, list):
        raise ApplicationError("'events' must be a list", status_code=422)
    if len(payloads) > settings.CONNECTOR_EVENT_MAX_BATCH:
        raise ApplicationError(
            f"a batch may hold at most {settings.CONNECTOR_EVENT_MAX_BATCH} events", status_code=422
        )
    parsed, kinds = [], {}
    for index, payload in enumerate(payloads):
        try:
            parsed.append(event_validate(payload))
            _check_namespace(tenant=tenant, data=parsed[-1], kinds=kinds)
        except ApplicationError as exc:
            raise ApplicationError(
                f"events[{index}]: {exc.message}", {"index": index}, status_code=422
            ) from exc
    for attempt in range(ATTEMPTS):
        try:
            return _ingest_parsed(tenant=tenant, parsed=parsed, observed_at=members_observed_at)
        except IntegrityError:
            # Another writer stored one of these events meanwhile; the batch rolled back
            # (with its on_commit callbacks) and is read again: it is now a duplicate.
            if attempt == ATTEMPTS - 1:
                raise
        except OperationalError as exc:
            # A deadlock with a writer outside this ordering (e.g. two batches recording the
            # same new identities): the batch rolled back and runs again.
            if not is_deadlock(exc):
                raise
            if attempt == ATTEMPTS - 1:
                raise ApplicationError(
                    "events not stored: a concurrent write to the same containers; retry the batch",
                    status_code=503,
                ) from exc
            deadlock_pause(attempt)
    raise AssertionError("unreachable")


@transaction.atomic
def _ingest_parsed(*, tenant: Tenant, parsed: list[EventIn], observed_at: datetime | None) -> dict:
    """Store a validated batch. A concurrent insert raises IntegrityError: the caller retries
    the whole batch, in which that event is then a duplicate (so no savepoint per event).
    The batch's groups are locked first, in key order; their clocks are read once and
    written once, at the end."""
    accepted = duplicates = 0
    cache: dict = {}  # sources, groups and their clocks, looked up once per batch
    groups_lock(tenant=tenant, containers=[d.container for d in parsed], cache=cache)
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
        after = {"tenant": tenant, "source": source, "data": data, "cache": cache, "observed_at": observed_at}
        if not isinstance(decided, int):
            duplicates += 1
            _repeated(**after)
            continue
        event.version = decided
        event.save(force_insert=True)
        versions.append(Known(event.version, event.digest, event.occurred_at))
        _stored(event=event, **after)
        accepted += 1
    clocks_flush(cache)
    return {"accepted": accepted, "duplicates": duplicates}
