"""Membership at ingest (`connectors.services.membership`): re-read member lists apply at
once, last write wins by its clock, lists are dated by when they were read."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from almanac.selectors import group_members, user_group_keys
from connectors.calendar.normalize import ics_payloads
from connectors.models import Event
from connectors.services.importer import ingest_all
from connectors.services.ingest import event_ingest, event_ingest_batch
from connectors.services.poller import poll_source
from tests.connectors.conftest import make_event
from tests.connectors.test_slack_poller import _source as slack_source
from tests.connectors.test_slack_poller import ts

pytestmark = pytest.mark.django_db

CHANNEL = "slack:channel:C123"
A, B = "slack:channel:CA", "slack:channel:CB"


def pushed(push, *events):
    response = push({"events": list(events)})
    assert response.status_code == 202, response.content
    return response.json()


def _member(key, user) -> bool:
    return key in user_group_keys(user)


def message(external_id, key, members, minute=0, **over):
    container = {"key": key, "name": "#x", "members": members, "public": False}
    return make_event(
        external_id=external_id, container=container, occurred_at=f"2026-11-30T10:{minute:02d}:00Z", **over
    )


# --- a re-read applies the container's current members -------------------------------------


def test_slack_poll_removes_a_member_while_the_channel_is_quiet(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    source = slack_source(company.tenant, slack_api)
    poll_source(source=source)
    assert group_members(tenant=company.tenant, key="slack:channel:G1") == ["bob", "wangwei"]
    slack_api.api.members["G1"] = ["U2"]  # wangwei left; nobody wrote since
    result = poll_source(source=source)
    assert result["accepted"] == 0  # nothing new is stored ...
    assert group_members(tenant=company.tenant, key="slack:channel:G1") == ["bob"]  # ... but he is out
    slack_api.api.members["G1"] = ["U2", "U3"]  # and back in
    poll_source(source=source)
    assert group_members(tenant=company.tenant, key="slack:channel:G1") == ["bob", "wangwei"]


def test_pushed_duplicate_with_a_new_member_list_applies_it(push, alice, bob):
    pushed(push, make_event())
    counts = pushed(push, make_event(container={"key": CHANNEL, "members": ["alice@acme.com"]}))
    assert counts == {"accepted": 0, "duplicates": 1}
    assert _member(CHANNEL, alice) and not _member(CHANNEL, bob)
    assert Event.objects.count() == 1


# --- last write wins, by event time --------------------------------------------------------


def _change(kind, user, minute):
    return make_event(
        external_id=f"C123/member/{user}/{minute}",
        kind=kind,
        occurred_at=f"2026-11-30T10:{minute:02d}:00Z",
        container={"key": CHANNEL, "members": [user]},
        text="",
        tags={},
    )


def test_a_late_join_does_not_undo_a_later_leave(push, alice, bob):
    pushed(push, _change("membership_added", "bob@acme.com", 10))
    pushed(push, _change("membership_removed", "bob@acme.com", 20))
    pushed(push, _change("membership_added", "bob@acme.com", 15))  # a retry, delivered late
    assert not _member(CHANNEL, bob)
    pushed(push, _change("membership_added", "bob@acme.com", 30))
    assert _member(CHANNEL, bob)


def test_an_older_member_list_does_not_regrant(push, alice, bob):
    members = ["alice@acme.com", "bob@acme.com"]
    pushed(push, make_event(occurred_at="2026-11-30T10:00:00Z"))  # alice and bob
    pushed(push, _change("membership_removed", "bob@acme.com", 20))
    late = make_event(external_id="C123/late", occurred_at="2026-11-30T10:15:00Z")
    pushed(push, late)  # written before bob left, delivered after
    assert not _member(CHANNEL, bob) and _member(CHANNEL, alice)
    newer = make_event(
        external_id="C123/newer",
        occurred_at="2026-11-30T11:00:00Z",
        container={"key": CHANNEL, "members": ["alice@acme.com"]},
    )
    older = make_event(
        external_id="C123/older",
        occurred_at="2026-11-30T10:30:00Z",
        container={"key": CHANNEL, "members": members},
    )
    pushed(push, newer, older)
    assert not _member(CHANNEL, bob)


# --- a member list is dated by when it was read, not by its item ---------------------------


def vevent(start: str, attendees: list[str], sequence: int, uid: str = "review-1@acme.example") -> list:
    return [
        "BEGIN:VEVENT",
        f"UID:{uid}",
        f"DTSTART:{start}",
        "SUMMARY:Apollo review",
        f"SEQUENCE:{sequence}",
        "ORGANIZER:mailto:alice@acme.example",
        *[f"ATTENDEE:mailto:{a}" for a in attendees],
        "END:VEVENT",
    ]


def ics(*vevents: list) -> bytes:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", *sum(vevents, []), "END:VCALENDAR"]
    return ("\r\n".join(lines) + "\r\n").encode()


@pytest.mark.django_db
def test_calendar_meeting_moved_earlier_without_bob_removes_bob(company):
    # As the calendar poller reads the feed: its lists are dated by the poll, not the meeting.
    tenant, key = company.tenant, "calendar:event:review-1@acme.example"

    def poll(data):
        payloads = ics_payloads(tenant=tenant, data=data)
        return ingest_all(tenant=tenant, payloads=payloads, members_observed_at=timezone.now())

    assert poll(ics(vevent("20261220T100000Z", ["bob@acme.example"], 0)))["accepted"] == 1
    assert group_members(tenant=tenant, key=key) == ["alice", "bob"]
    # A week earlier, and bob is no longer invited.
    # Stored under its new start, and the old time retired (connectors.calendar.normalize.moves).
    assert poll(ics(vevent("20261213T100000Z", [], 1)))["accepted"] == 2
    assert group_members(tenant=tenant, key=key) == ["alice"]


@pytest.mark.django_db
def test_an_old_export_does_not_undo_a_later_removal(company):
    from datetime import timedelta

    tenant, key = company.tenant, "calendar:event:review-1@acme.example"
    now = timezone.now()
    current = ics(vevent((now + timedelta(days=2)).strftime("%Y%m%dT%H%M%SZ"), ["bob@acme.example"], 1))
    assert ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=current))["accepted"]
    removal = {
        "source": "calendar",
        "external_id": "review-1/bob-left",
        "kind": "membership_removed",
        "occurred_at": (now + timedelta(days=1)).isoformat(),
        "container": {"key": key, "name": "Review", "members": ["bob@acme.example"], "public": False},
        "thread_key": key,
    }
    ingest_all(tenant=tenant, payloads=[{**removal, "version": 1, "text": "", "title": "", "tags": {}}])
    assert group_members(tenant=tenant, key=key) == ["alice"]
    old = ics(vevent((now - timedelta(days=30)).strftime("%Y%m%dT%H%M%SZ"), ["bob@acme.example"], 0))
    ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=old))  # an old export
    assert group_members(tenant=tenant, key=key) == ["alice"]


@pytest.mark.django_db
def test_slack_removal_applies_after_the_newest_message_was_deleted(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    api = slack_api.api
    newest = {"type": "message", "user": "U3", "text": "newest", "ts": ts(1)}
    api.history["G1"] = [[newest, *api.history["G1"][0]]]
    source = slack_source(company.tenant, slack_api)
    poll_source(source=source)
    assert group_members(tenant=company.tenant, key="slack:channel:G1") == ["bob", "wangwei"]
    api.history["G1"] = [[m for m in api.history["G1"][0] if m is not newest]]  # deleted
    api.members["G1"] = ["U2"]  # and wangwei removed: the polls re-read only older messages
    assert poll_source(source=source, force=True)["state"] == "ok"
    assert group_members(tenant=company.tenant, key="slack:channel:G1") == ["bob"]


@pytest.mark.django_db
def test_explicit_leave_after_the_poll_started_is_kept(tenant, alice, bob):
    """A leave at 10:30 wins over a list read by a poll that started at 10:20 (it may predate
    the leave), and a removal at 10:10 changes nothing after a list read at 10:20."""
    observed = datetime(2026, 11, 30, 10, 20, tzinfo=UTC)
    leave = message("CA/member/bob/1", A, ["bob@acme.com"], 30, kind="membership_removed", text="", tags={})
    event_ingest(tenant=tenant, payload=leave)
    listed = message("CA/1", A, ["alice@acme.com", "bob@acme.com"], 0)
    event_ingest(tenant=tenant, payload=listed, members_observed_at=observed)
    assert A in user_group_keys(alice) and A not in user_group_keys(bob)
    stale = message(
        "CA/member/alice/2", A, ["alice@acme.com"], 10, kind="membership_removed", text="", tags={}
    )
    event_ingest(tenant=tenant, payload=stale)  # older than the list: its effect is in it
    assert A in user_group_keys(alice)


# --- clocks: no write when nothing changed -------------------------------------------------


@pytest.mark.django_db
def test_unchanged_member_list_writes_its_clock_once(tenant, alice, bob):
    members = ["alice@acme.com", "bob@acme.com"]
    batch = [message(f"CA/{i}", A, members) for i in range(4)]
    with CaptureQueriesContext(connection) as ctx:
        event_ingest_batch(tenant=tenant, payloads=batch)
    clock_writes = [q["sql"] for q in ctx.captured_queries if "connectors_membershipclock" in q["sql"]]
    assert sum(s.startswith(("INSERT", "UPDATE")) for s in clock_writes) == 1
    with CaptureQueriesContext(connection) as ctx:  # all duplicates, the same list
        event_ingest_batch(tenant=tenant, payloads=batch)
    clock_queries = [q["sql"] for q in ctx.captured_queries if "connectors_membershipclock" in q["sql"]]
    assert len(clock_queries) == 1  # read once for the batch, not per duplicate, never written
