"""Ingest: validate a normalized event, store it once, apply its membership, enqueue the compiler."""

from __future__ import annotations

import json

from django.db import IntegrityError, transaction
from pydantic import ValidationError

from almanac.errors import ApplicationError
from almanac.models import AccessGroup, GroupMembership, Tenant
from almanac.services import group_ensure, membership_add, membership_remove
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
    raw = json.dumps(event.raw, default=str)
    if len(raw) > conf.EVENT_MAX_RAW_BYTES:
        raise ApplicationError("invalid event: raw payload is too large", status_code=422)
    if "\\u0000" in raw:
        raise ApplicationError("invalid event: raw contains NUL bytes", status_code=422)
    if event.kind in MEMBERSHIP_KINDS and not event.container.members:
        raise ApplicationError(f"invalid event: {event.kind} needs container.members", status_code=422)
    return event


def _check_namespace(*, tenant: Tenant, data: EventIn) -> None:
    """A container namespace named after a source kind (slack:, email:, github:, ...) belongs
    to sources of that kind, so one connector can never grant access to another's containers."""
    namespace = data.container.key.split(":", 1)[0]
    if namespace not in Source.Kind.values or namespace == Source.Kind.PUSH:
        return
    existing = Source.objects.filter(tenant=tenant, name=data.source).values_list("kind", flat=True).first()
    kind = existing or source_kind_for_name(data.source)
    if kind != namespace:
        raise ApplicationError(
            f"invalid event: container.key namespace '{namespace}:' belongs to {namespace} sources, "
            f"and source '{data.source}' is of kind {kind}",
            status_code=422,
        )


def _tags(data: EventIn) -> dict:
    return {k: v for k, v in data.tags.model_dump().items() if v not in (None, "", [])}


def _membership_apply(*, tenant: Tenant, source: Source, data: EventIn) -> None:
    """Apply the event's membership to the container's access group, right away."""
    container = data.container
    if container.members is None:
        return
    group = group_ensure(
        tenant=tenant, key=container.key, kind=AccessGroup.Kind.SOURCE, name=container.name, builtin=False
    )
    if container.name and group.name != container.name:
        group.name = container.name
        group.save(update_fields=["name"])
    users = identity_resolve(tenant=tenant, source_kind=source.kind, members=container.members)
    if data.kind == Event.Kind.MEMBERSHIP_REMOVED:
        for user in users:
            membership_remove(user=user, group=group)
        return
    for user in users:
        membership_add(user=user, group=group, origin=source.name)
    if data.kind != Event.Kind.MEMBERSHIP_ADDED:
        # Content event: the list is the container's full membership, replacing what this
        # source granted before (grants by admins or other sources stay).
        GroupMembership.objects.filter(group=group, origin=source.name).exclude(
            user_id__in=[u.pk for u in users]
        ).delete()


def _enqueue_compile(event_id: int) -> None:
    import connectors.services as package  # looked up at call time so tests can patch it

    transaction.on_commit(lambda: package.async_task("wiki.tasks.compile_event_task", event_id))


def _store(*, tenant: Tenant, data: EventIn) -> tuple[Event, bool]:
    source = source_ensure(tenant=tenant, name=data.source)
    existing = Event.objects.filter(source=source, external_id=data.external_id, version=data.version).first()
    if existing is not None:
        return existing, False
    container = data.container
    try:
        with transaction.atomic():
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
        return Event.objects.get(source=source, external_id=data.external_id, version=data.version), False
    _membership_apply(tenant=tenant, source=source, data=data)
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
    return _store(tenant=tenant, data=data)


@transaction.atomic
def event_ingest_batch(*, tenant: Tenant, payloads: list) -> dict:
    """Ingest many events in one transaction; all are validated first, and one bad event
    rejects the whole batch (the error names its index)."""
    if not isinstance(payloads, list):
        raise ApplicationError("'events' must be a list", status_code=422)
    if len(payloads) > conf.EVENT_MAX_BATCH:
        raise ApplicationError(f"a batch may hold at most {conf.EVENT_MAX_BATCH} events", status_code=422)
    parsed = []
    for index, payload in enumerate(payloads):
        try:
            parsed.append(event_validate(payload))
            _check_namespace(tenant=tenant, data=parsed[-1])
        except ApplicationError as exc:
            raise ApplicationError(
                f"events[{index}]: {exc.message}", {"index": index}, status_code=422
            ) from exc
    accepted = duplicates = 0
    for data in parsed:
        _, created = _store(tenant=tenant, data=data)
        accepted += created
        duplicates += not created
    return {"accepted": accepted, "duplicates": duplicates}
