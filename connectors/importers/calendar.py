"""Calendar: ICS (iCalendar) files and feeds. Each VEVENT is one `calendar_event` whose
attendees and organizer form the access group `calendar:event:<uid>`; a cancelled event
becomes `message_deleted`. CATEGORIES like `customer:Vercel` / `project:Apollo` become tags."""

from __future__ import annotations

from datetime import UTC, date, datetime

from icalendar import Calendar

from almanac.models import Tenant
from connectors.importers import digest, iso, version_for_content


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


def event_payload(*, tenant: Tenant, source_name: str, component) -> dict | None:
    uid = str(component.get("UID") or "").strip()
    start = _when(component.get("DTSTART"))
    if not uid or start is None:
        return None
    recurrence = _when(component.get("RECURRENCE-ID"))
    external_id = f"{uid}/{recurrence.isoformat()}" if recurrence else uid
    people = _people(component)
    cancelled = str(component.get("STATUS") or "").upper() == "CANCELLED"
    payload = {
        "source": source_name,
        "external_id": external_id,
        "kind": "message_deleted" if cancelled else "calendar_event",
        "occurred_at": iso(start),
        "container": {
            "key": f"calendar:event:{uid}"[:300],
            "name": str(component.get("SUMMARY") or "")[:300],
            "members": people,
        },
        "thread_key": f"calendar:event:{uid}"[:500],
        "author": people[0] if people else "",
        "title": str(component.get("SUMMARY") or "")[:500],
        "text": _text(component, people, start, _when(component.get("DTEND"))),
        "tags": _tags(component),
    }
    content = digest(payload, int(component.get("SEQUENCE") or 0))
    payload["version"] = version_for_content(
        tenant=tenant, source_name=source_name, external_id=external_id, content_digest=content
    )
    payload["raw"] = {"digest": content, "uid": uid, "sequence": int(component.get("SEQUENCE") or 0)}
    return payload


def ics_payloads(*, tenant: Tenant, data: bytes | str, source_name: str = "calendar"):
    calendar = Calendar.from_ical(data)
    for component in calendar.walk("VEVENT"):
        payload = event_payload(tenant=tenant, source_name=source_name, component=component)
        if payload is not None:
            yield payload
