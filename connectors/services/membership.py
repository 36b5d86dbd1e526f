"""Container memberships from connector events (docs/design.md, Identity and access): the container's
access group
follows its member lists and join/leave events, last write by time wins (`MembershipClock`).

A full list is dated when it was read (`observed_at`: a poll's or an import's start), a
join or leave by its own time. Every writer locks the groups it touches first, in key
order, so concurrent batches cannot deadlock on them; clocks are read once per batch and
written at its end, only when they changed.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from django.utils import timezone

from almanac.models import AccessGroup, GroupMembership, Tenant
from almanac.services.audit import access_audit
from almanac.services.tenancy import BUILTIN, group_ensure
from connectors.models import Event, MembershipClock, Source
from connectors.schemas import EventIn
from connectors.services.identity import identity_resolve

MEMBERSHIP_KINDS = {Event.Kind.MEMBERSHIP_ADDED, Event.Kind.MEMBERSHIP_REMOVED}


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


class Clocks:
    """A locked group's membership clocks, read once per batch and written back once
    (`clocks_flush`): the group's row lock keeps every other writer out meanwhile."""

    def __init__(self, group: AccessGroup):
        self.group = group
        self.lists: dict[str, tuple[datetime, str]] = {}  # origin -> (time, digest) of its latest list
        self.stored: dict[str, tuple[datetime, str]] = {}  # ... as the database holds it
        self.users: dict[int, datetime] = {}  # user id -> latest added/removed of that person (any origin)

    def flush(self) -> None:
        for origin, (at, digest) in self.lists.items():
            if self.stored.get(origin) == (at, digest):
                continue  # nothing new since it was read: no write
            if origin in self.stored:
                rows = MembershipClock.objects.filter(group=self.group, origin=origin, user=None)
                rows.update(at=at, members_digest=digest)
            else:
                clock = MembershipClock(group=self.group, origin=origin, at=at, members_digest=digest)
                MembershipClock.objects.bulk_create([clock], ignore_conflicts=True)
            self.stored[origin] = (at, digest)


def groups_lock(*, tenant: Tenant, containers: list, cache: dict) -> None:
    """Lock the access groups of these containers (FOR NO KEY UPDATE), in key order,
    creating missing ones, and read their clocks: two queries per batch.

    Every writer of a source group's memberships or visibility holds its row lock first, so
    last write wins holds under concurrency (no writer decides on clocks another is
    changing), and the key order means two batches touching the same groups wait for each
    other instead of deadlocking. Missing groups are created (in key order) after the
    existing ones are locked."""
    names: dict[str, str] = {}
    for container in containers:
        if ("clocks", container.key) not in cache:
            names.setdefault(container.key, container.name)
    if not names:
        return
    keys = sorted(names)
    found = _groups_locked(tenant=tenant, keys=keys)
    missing = [key for key in keys if key not in found]
    for key in missing:
        group_ensure(tenant=tenant, key=key, kind=AccessGroup.Kind.SOURCE, name=names[key], builtin=False)
    if missing:  # created here, or meanwhile by a writer that has committed since
        found.update(_groups_locked(tenant=tenant, keys=missing))
    clocks = {group.pk: Clocks(group) for group in found.values()}
    rows = MembershipClock.objects.filter(group__in=list(found.values()))
    for group_id, origin, user_id, at, digest in rows.values_list(
        "group_id", "origin", "user_id", "at", "members_digest"
    ):
        clock = clocks[group_id]
        if user_id is None:
            clock.lists[origin] = clock.stored[origin] = (at, digest)
        else:
            clock.users[user_id] = max(at, clock.users.get(user_id, at))
    for key, group in found.items():
        cache.setdefault(key, group)
        cache[("clocks", key)] = clocks[group.pk]


def _groups_locked(*, tenant: Tenant, keys: list[str]) -> dict[str, AccessGroup]:
    groups = AccessGroup.objects.select_for_update(no_key=True).filter(tenant=tenant, key__in=keys)
    return {group.key: group for group in groups.order_by("key")}


def clocks_flush(cache: dict) -> None:
    for key, value in cache.items():
        if isinstance(key, tuple) and key[0] == "clocks":
            value.flush()


def _members_digest(members: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted({m.lower() for m in members})).encode()).hexdigest()[:32]


def membership_apply(
    *,
    tenant: Tenant,
    source: Source,
    data: EventIn,
    cache: dict,
    observed_at: datetime | None = None,
    repeated: bool = False,
) -> None:
    """Apply the event's membership to the container's access group, right away.

    Content event: `members` is the container's full membership and replaces what this
    source granted before (grants by admins, other sources and the directory stay).
    membership_added / membership_removed: only the listed people change.

    Last write wins, by two clocks (docs/connectors.md):
    - a full list is dated by when it was observed: `observed_at` (the start of the poll or
      import that read it), or the event's time when the caller has none (a push). A list
      older than the latest list this source applied changes nothing;
    - an added/removed is dated by its own `occurred_at`. It changes nothing when older than
      the latest list this source applied (that list was read after it, so it shows its
      effect), and nobody's membership changes on information older than the latest
      added/removed of that person (a late join cannot undo a later leave; a list read
      before a leave does not undo it).
    `repeated`: a duplicate event; its list counts only if it differs from the last applied.
    """
    if data.container.members is None:
        return
    groups_lock(tenant=tenant, containers=[data.container], cache=cache)
    group = _group(tenant=tenant, container=data.container, cache=cache)
    clocks: Clocks = cache[("clocks", data.container.key)]
    origin, full = _origin(source), data.kind not in MEMBERSHIP_KINDS
    # No membership is observed in the future: a calendar item's time is its meeting's start.
    at = min((observed_at or data.occurred_at) if full else data.occurred_at, timezone.now())
    listed = clocks.lists.get(origin)
    if listed is not None and at < listed[0]:
        return
    if not full:
        people = identity_resolve(tenant=tenant, source_kind=source.kind, members=data.container.members)
        wanted = {u.pk for u in people if at >= clocks.users.get(u.pk, at)}
        added = data.kind == Event.Kind.MEMBERSHIP_ADDED
        _members_change(group=group, origin=origin, user_ids=wanted, added=added)
        _user_clocks_advance(group=group, origin=origin, user_ids=wanted, at=at)
        clocks.users.update(dict.fromkeys(wanted, at))
        return
    digest = _members_digest(data.container.members)
    if not (repeated and listed is not None and digest == listed[1]):
        # (a list applied last, read again, changes nothing: a removal by hand stays)
        _list_apply(tenant=tenant, source=source, group=group, data=data, clocks=clocks, at=at)
    clocks.lists[origin] = (at, digest)  # written once per batch, when it changed


def _list_apply(
    *, tenant: Tenant, source: Source, group: AccessGroup, data: EventIn, clocks: Clocks, at: datetime
) -> None:
    origin = _origin(source)
    people = identity_resolve(tenant=tenant, source_kind=source.kind, members=data.container.members)
    wanted = {u.pk for u in people if at >= clocks.users.get(u.pk, at)}
    newer = {uid for uid, clock in clocks.users.items() if at < clock}  # left as they are
    existing = dict(GroupMembership.objects.filter(group=group).values_list("user_id", "origin"))
    _members_change(group=group, origin=origin, user_ids=wanted - set(existing), added=True)
    dropped = {uid for uid, by in existing.items() if by == origin and uid not in wanted | newer}
    _members_change(group=group, origin=origin, user_ids=dropped, added=False)


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
        members = GroupMembership.objects.filter(group=group, user_id__in=user_ids)
        changed = set(user_ids) - set(members.values_list("user_id", flat=True))
        GroupMembership.objects.bulk_create(
            [GroupMembership(user_id=uid, group=group, origin=origin) for uid in sorted(changed)],
            ignore_conflicts=True,
        )
    else:  # a removal from the source removes whoever granted it, except the directory
        leaving = GroupMembership.objects.filter(group=group, user_id__in=user_ids).exclude(origin=BUILTIN)
        changed = set(leaving.values_list("user_id", flat=True))
        leaving.delete()
    access_audit(changes={group.pk: changed}, granted=added, actor=f"connector:{origin}", origin=origin)


def _visibility_from_history(*, group: AccessGroup, event_id: int | None) -> None:
    """A container first observed since visibility was recorded (an install upgraded with
    its inbox full, a group that held no members): its state starts as its newest stored
    content event said, this one left out, so an old event arriving late is compared with
    what is known instead of counting as a change."""
    events = Event.objects.filter(tenant_id=group.tenant_id, container_key=group.key).exclude(
        kind__in=MEMBERSHIP_KINDS
    )
    if event_id is not None:
        events = events.exclude(pk=event_id)
    newest = events.order_by("-occurred_at", "-id").values_list("container_public", "occurred_at").first()
    if newest is not None:
        AccessGroup.objects.filter(pk=group.pk, public_at__isnull=True).update(
            public=newest[0], public_at=newest[1]
        )
        group.public, group.public_at = newest[0], newest[1]


def visibility_observe(
    *,
    tenant: Tenant,
    data: EventIn,
    cache: dict,
    observed_at: datetime | None = None,
    event_id: int | None = None,
) -> bool:
    """Record the container's visibility as this content event shows it (a duplicate too: a
    poller's re-read carries the channel as it is now), dated like its member list. True
    when it flipped: the container's sections must follow at once. An observation older
    than the newest one changes nothing, whatever order events arrive in. `event_id`: the
    event just stored for this observation (a duplicate stores none)."""
    if data.kind in MEMBERSHIP_KINDS:
        return False
    group = _group(tenant=tenant, container=data.container, cache=cache)
    at = min(observed_at or data.occurred_at, timezone.now())
    public = data.container.public
    if group.public_at is None:
        _visibility_from_history(group=group, event_id=event_id)
    # The group's row is locked (groups_lock) and its state read with it: decided here, and
    # written only when it moves (most events repeat what the container's state says).
    if group.public_at is not None and at < group.public_at:
        return False  # older than what is known
    flipped = group.public is not public
    if not flipped and group.public_at == at:
        return False
    AccessGroup.objects.filter(pk=group.pk).update(public=public, public_at=at)
    group.public, group.public_at = public, at
    return flipped
