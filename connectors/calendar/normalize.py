"""Calendar: normalization of an ICS (iCalendar) document, a file or a feed. Each VEVENT is one `calendar_event` whose
attendees and organizer form the access group `calendar:event:<uid>`; a cancelled event
becomes `message_deleted`. CATEGORIES like `customer:Vercel` / `project:Apollo` become tags.

Each occurrence of a series keeps its own readers: one expanded from the series, or an
override (RECURRENCE-ID) that lists the series' people, is in the series' group; an override
that lists other people (an invitee added or dropped for that meeting, a cancellation that
lists only its organizer) has a group of its own, `calendar:event:<uid>/<recurrence id>`, so
its list never replaces who may read the rest of the series.

A recurring event (RRULE, RDATE, EXDATE) becomes one event per occurrence inside a window
around now (CALENDAR_RECURRENCE_PAST_DAYS back, CALENDAR_RECURRENCE_FUTURE_DAYS ahead, at
most CALENDAR_RECURRENCE_MAX per series), with the id `<uid>/<occurrence start>` — the
same id a RECURRENCE-ID override of that occurrence has, which then replaces it. Every
occurrence carries its series in `thread_key` (`calendar:event:<uid>`) and in `raw`
(`series`, `recurrence_id`), which the wiki folds into one line (`wiki.series`).

A meeting moved earlier (an override's or an updated event's new DTSTART) would lose to its
old version, since the compiler keeps an item's version with the latest event time: it is
stored as `<id>@<new start>`, and the stored ids of the same slot that are not the current
one get a `message_deleted` version at their own time (`moves`), so the new time is served
and the old one never is."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from dateutil.rrule import rruleset, rrulestr
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from icalendar import Calendar

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.models import Event
from connectors.schemas import link_or_empty
from connectors.services.identity import identity_upsert_many
from connectors.services.normalize import digest, iso, version_for_content


def _address(value) -> str:
    text = str(value or "")
    return text[7:].lower() if text.lower().startswith("mailto:") else text.lower()


def _when(value) -> datetime | None:
    if value is None:
        return None
    dt = value.dt
    if isinstance(dt, datetime):
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
    if isinstance(dt, date):
        return datetime(dt.year, dt.month, dt.day, tzinfo=UTC)
    return None


def _people(component) -> list[str]:
    attendees = component.get("ATTENDEE") or []
    if not isinstance(attendees, list):
        attendees = [attendees]
    people = [_address(a) for a in attendees]
    if component.get("ORGANIZER"):
        people.insert(0, _address(component.get("ORGANIZER")))
    return list(dict.fromkeys(p for p in people if p))


def _names_record(*, tenant: Tenant, components) -> None:
    """The attendees' and organizers' names (CN) as their calendar identities' names: what
    the wiki titles their person pages with. One call for a whole feed."""
    people = {}
    for component in components:
        values = component.get("ATTENDEE") or []
        for value in [component.get("ORGANIZER"), *(values if isinstance(values, list) else [values])]:
            name = str(getattr(value, "params", {}).get("CN") or "").strip()
            if value and name and _address(value) and name.lower() != _address(value):
                people.setdefault(_address(value), name)
    if people:
        identity_upsert_many(
            tenant=tenant, source_kind="calendar", people=[(a, n, a) for a, n in people.items()]
        )


def _tags(component) -> dict:
    tags: dict = {}
    categories = component.get("CATEGORIES")
    for group in categories if isinstance(categories, list) else [categories] if categories else []:
        for cat in getattr(group, "cats", []):
            name, _, value = str(cat).partition(":")
            if name.strip().lower() in {"customer", "project"} and value.strip():
                tags[name.strip().lower()] = value.strip()
    return tags


def _text(component, people: list[str], start: datetime, end: datetime | None) -> str:
    lines = [str(component.get("DESCRIPTION") or "").strip()]
    when = start.strftime("%Y-%m-%d %H:%M %Z") + (f" – {end.strftime('%H:%M')}" if end else "")
    lines.append(f"When: {when}")
    if component.get("LOCATION"):
        lines.append(f"Location: {component.get('LOCATION')}")
    if people:
        lines.append("Attendees: " + ", ".join(people))
    return "\n".join(line for line in lines if line)


def _dates(value) -> list[datetime]:
    """The datetimes of an RDATE/EXDATE property (one or several lines, each with one or more)."""
    out: list[datetime] = []
    for line in value if isinstance(value, list) else [value] if value is not None else []:
        for item in getattr(line, "dts", []):
            when = _when(item)
            if when is not None:
                out.append(when)
    return out


def occurrences(component, *, now: datetime) -> list[datetime]:
    """Starts of a recurring VEVENT's occurrences inside the window around `now`, or [] if
    it does not recur. A broken RRULE is treated as no recurrence (the event still counts once)."""
    if component.get("RRULE") is None and component.get("RDATE") is None:
        return []
    start = _when(component.get("DTSTART"))
    if start is None:
        return []
    # An all-day or floating series (DTSTART;VALUE=DATE, no TZID) has a floating UNTIL
    # (RFC 5545): its rule is expanded in floating time, the starts read as UTC after.
    raw = component.get("DTSTART").dt
    floating = not isinstance(raw, datetime) or raw.tzinfo is None

    def local(value: datetime) -> datetime:
        return value.replace(tzinfo=None) if floating else value

    rules = rruleset()
    try:
        for rule in (
            component.get("RRULE") if isinstance(component.get("RRULE"), list) else [component.get("RRULE")]
        ):
            if rule is not None:
                rules.rrule(rrulestr(rule.to_ical().decode(), dtstart=local(start), ignoretz=floating))
    except (ValueError, TypeError):
        return []
    for extra in _dates(component.get("RDATE")):
        rules.rdate(local(extra))
    for skip in _dates(component.get("EXDATE")):
        rules.exdate(local(skip))
    window = rules.between(
        local(now - timedelta(days=settings.CALENDAR_RECURRENCE_PAST_DAYS)),
        local(now + timedelta(days=settings.CALENDAR_RECURRENCE_FUTURE_DAYS)),
        inc=True,
    )
    return [
        when.replace(tzinfo=UTC) if floating else when for when in window[: settings.CALENDAR_RECURRENCE_MAX]
    ]


def _container_key(uid: str, occurrence: str = "") -> str:
    """The access group of an event, or of one occurrence (`occurrence`: its recurrence id);
    a long UID is cut so that the occurrence's part is kept."""
    suffix = f"/{occurrence}" if occurrence else ""
    return f"calendar:event:{uid}"[: 300 - len(suffix)] + suffix


def event_payload(
    *,
    tenant: Tenant,
    source_name: str,
    component,
    occurrence: datetime | None = None,
    series_people: list[str] | None = None,
) -> dict | None:
    """One event; for a recurring series, the occurrence starting at `occurrence`.
    `series_people`: the series' organizer and attendees, for an override (None: the feed
    does not hold the series)."""
    uid = str(component.get("UID") or "").strip()
    start = _when(component.get("DTSTART"))
    if not uid or start is None:
        return None
    end = _when(component.get("DTEND"))
    recurrence = _when(component.get("RECURRENCE-ID"))
    if occurrence is not None:
        end = end + (occurrence - start) if end else None
        start = recurrence = occurrence
    external_id = f"{uid}/{recurrence.isoformat()}" if recurrence else uid
    people = _people(component)
    cancelled = str(component.get("STATUS") or "").upper() == "CANCELLED"
    # An override that lists other people than its series (or whose series the feed does
    # not hold) has a group of its own: its list never changes who reads the rest.
    own = occurrence is None and recurrence is not None
    own = own and (series_people is None or set(people) != set(series_people))
    # A moved override's group names where it moved to: a member list is dated by its
    # meeting's time (docs/connectors.md), so a list of the same occurrence moved earlier
    # would count as older than the one it replaces, and change nobody's access.
    moved = f"@{start.astimezone(UTC).isoformat()}" if own and start != recurrence else ""
    payload = {
        "source": source_name,
        "external_id": external_id,
        "kind": "message_deleted" if cancelled else "calendar_event",
        "occurred_at": iso(start),
        "container": {
            "key": _container_key(uid, f"{recurrence.isoformat()}{moved}" if own else ""),
            "name": str(component.get("SUMMARY") or "")[:300],
            "members": people,
        },
        "thread_key": f"calendar:event:{uid}"[:500],
        "author": people[0] if people else "",
        "title": str(component.get("SUMMARY") or "")[:500],
        "text": _text(component, people, start, end),
        "tags": _tags(component),
    }
    link = link_or_empty(str(component.get("URL") or ""))
    if link:
        payload["url"] = link  # the event's page (RFC 5545 URL), when the feed has one
    content = digest(payload, int(component.get("SEQUENCE") or 0))
    payload["version"] = version_for_content(
        tenant=tenant, source_name=source_name, external_id=external_id, content_digest=content
    )
    payload["raw"] = {
        "digest": content,
        "uid": uid,
        "sequence": int(component.get("SEQUENCE") or 0),
        "series": uid if recurrence else "",
        "recurrence_id": recurrence.isoformat() if recurrence else "",
        "modified": _modified(component),
    }
    return payload


def _modified(component) -> str:
    """When the event was last changed (LAST-MODIFIED, else DTSTAMP), UTC ISO; "" if unknown."""
    for name in ("LAST-MODIFIED", "DTSTAMP"):
        when = _when(component.get(name))
        if when is not None:
            return when.astimezone(UTC).isoformat()
    return ""


def _revision(raw: dict | None) -> tuple[int, str]:
    """Which of two readings of an event is newer (RFC 5545: SEQUENCE, then the change time)."""
    raw = raw or {}
    return int(raw.get("sequence") or 0), str(raw.get("modified") or "")


def _version(tenant: Tenant, payload: dict) -> int:
    return version_for_content(
        tenant=tenant,
        source_name=payload["source"],
        external_id=payload["external_id"],
        content_digest=payload["raw"]["digest"],
    )


def moves(*, tenant: Tenant, source_name: str, uid: str, payloads: list[dict]) -> list[dict]:
    """The payloads of one UID, each under the id it is current under, plus the
    `message_deleted` versions that retire the ids its slots were stored under before.

    A slot is an occurrence (`<uid>/<recurrence id>`) or a single event (`<uid>`). Its item
    is current under the slot's id unless a stored version of that id is later than the new
    start (the compiler keeps the version with the latest event time) and older as a
    revision (SEQUENCE, then LAST-MODIFIED/DTSTAMP: an old export read after a newer one
    stays old); then under `<slot>@<start>`. Every other stored id of the slot (`<slot>`, `<slot>@…`) whose newest
    version is not a deletion gets one, dated at that version's time: a moved meeting never
    keeps its old time, wherever it moved to, and re-reading the same feed adds nothing.
    """
    stored: dict[str, list[tuple]] = {}
    rows = Event.objects.filter(tenant=tenant, source__name=source_name).filter(
        Q(external_id=uid) | Q(external_id__startswith=f"{uid}/") | Q(external_id__startswith=f"{uid}@")
    )
    for external_id, version, occurred_at, kind, raw in rows.values_list(
        "external_id", "version", "occurred_at", "kind", "raw"
    ):
        # A cancellation read from the feed is a version of the slot; a retirement written
        # below (the slot's item moved to another id) is not.
        retired = bool((raw or {}).get("retired"))
        stored.setdefault(external_id, []).append((occurred_at, version, kind, _revision(raw), retired))
    out = []
    for payload in payloads:
        slot, start = payload["external_id"], datetime.fromisoformat(payload["occurred_at"])
        revision = _revision(payload["raw"])
        # (a cancellation counts too: the compiler keeps the latest time, a deletion included)
        later = [r for when, _, _, r, retired in stored.get(slot, []) if when > start and not retired]
        later = bool(later) and all(r < revision for r in later)
        chosen = f"{slot}@{start.astimezone(UTC).isoformat()}" if later else slot
        if chosen != slot:
            payload = {**payload, "external_id": chosen}
            payload["version"] = _version(tenant, payload)
        out.append(payload)
        for other, versions in sorted(stored.items()):
            if other == chosen or not (other == slot or other.startswith(f"{slot}@")):
                continue
            when, _, kind, _, _ = max(versions)
            if kind == "message_deleted":
                continue
            gone = digest("message_deleted", other, iso(when))
            out.append(
                {
                    **payload,
                    "external_id": other,
                    "kind": "message_deleted",
                    "occurred_at": iso(when),
                    "version": max(v[1] for v in versions) + 1,
                    # No member list: the deletion says nothing about who is invited now.
                    "container": {k: v for k, v in payload["container"].items() if k != "members"},
                    "raw": {**payload["raw"], "digest": gone, "retired": True},
                }
            )
    return out


def ics_payloads(
    *, tenant: Tenant, data: bytes | str, source_name: str = "calendar", now: datetime | None = None
):
    """The feed's events; an ApplicationError for an event that cannot be stored (counted as
    rejected by `ingest_all`)."""
    now = now or timezone.now()
    try:
        calendar = Calendar.from_ical(data)
    except ValueError as exc:
        raise ValueError(f"not an iCalendar (.ics) feed: {str(exc)[:120]}") from exc
    components = list(calendar.walk("VEVENT"))
    _names_record(tenant=tenant, components=components)
    # Occurrences a RECURRENCE-ID override replaces (moved, renamed or cancelled ones).
    overridden = {
        (str(c.get("UID") or "").strip(), _when(c.get("RECURRENCE-ID")))
        for c in components
        if c.get("RECURRENCE-ID") is not None
    }
    # Who a series invites (its organizer and attendees), by UID: its overrides that list
    # the same people share its group.
    series_people = {
        str(c.get("UID") or "").strip(): _people(c) for c in components if c.get("RECURRENCE-ID") is None
    }
    by_uid: dict[str, list[dict]] = {}
    for component in components:
        starts = [None] if component.get("RECURRENCE-ID") is not None else occurrences(component, now=now)
        uid = str(component.get("UID") or "").strip()
        if "\x00" in uid:  # never stored, nor looked up (PostgreSQL refuses NUL in text)
            yield ApplicationError("calendar event UID contains a NUL byte")
            continue
        for occurrence in starts or [None]:
            if occurrence is not None and (uid, occurrence) in overridden:
                continue
            payload = event_payload(
                tenant=tenant,
                source_name=source_name,
                component=component,
                occurrence=occurrence,
                series_people=series_people.get(uid),
            )
            if payload is not None:
                by_uid.setdefault(uid, []).append(payload)
    for uid, payloads in by_uid.items():
        yield from moves(tenant=tenant, source_name=source_name, uid=uid, payloads=payloads)
