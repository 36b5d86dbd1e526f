"""Ingest fixes, round 2: member lists dated by when they were read, group locks in key
order (no deadlock, no lost last write), deadlocks retried, NUL ids refused, a Slack re-read
by another path is no new version, stored rows without a digest."""

from datetime import UTC, datetime

import psycopg
import pytest
from django.db import OperationalError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from almanac.selectors import group_members, user_group_keys
from connectors import services, webhooks
from connectors.importers import calendar, ingest_all
from connectors.importers import slack as sl
from connectors.models import Event, SyncCursor
from connectors.pollers import poll_source
from connectors.services import ingest
from tests.connectors.conftest import make_event
from tests.connectors.servers import Mailbox, imap_server
from tests.connectors.test_imap_poller import imap_source, mail
from tests.connectors.test_slack_poller import _source as slack_source
from tests.connectors.test_slack_poller import ts
from tests.locking import while_locked

A, B = "slack:channel:CA", "slack:channel:CB"


def _deadlock() -> OperationalError:
    try:
        raise OperationalError("deadlock detected") from psycopg.errors.DeadlockDetected("deadlock detected")
    except OperationalError as exc:
        return exc


def _message(external_id, key, members, minute=0, **over):
    container = {"key": key, "name": "#x", "members": members, "public": False}
    return make_event(
        external_id=external_id, container=container, occurred_at=f"2026-11-30T10:{minute:02d}:00Z", **over
    )


# --- 1. a member list is dated by when it was read, not by its item --------------------


def _vevent(start: str, attendees: list[str], sequence: int, uid: str = "review-1@acme.example") -> list:
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


def _ics(*vevents: list) -> bytes:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", *sum(vevents, []), "END:VCALENDAR"]
    return ("\r\n".join(lines) + "\r\n").encode()


@pytest.mark.django_db
def test_calendar_meeting_moved_earlier_without_bob_removes_bob(company):
    # As the calendar poller reads the feed: its lists are dated by the poll, not the meeting.
    tenant, key = company.tenant, "calendar:event:review-1@acme.example"

    def poll(data):
        payloads = calendar.ics_payloads(tenant=tenant, data=data)
        return ingest_all(tenant=tenant, payloads=payloads, members_observed_at=timezone.now())

    assert poll(_ics(_vevent("20261220T100000Z", ["bob@acme.example"], 0)))["accepted"] == 1
    assert group_members(tenant=tenant, key=key) == ["alice", "bob"]
    # A week earlier, and bob is no longer invited.
    assert poll(_ics(_vevent("20261213T100000Z", [], 1)))["accepted"] == 1
    assert group_members(tenant=tenant, key=key) == ["alice"]


@pytest.mark.django_db
def test_an_old_export_does_not_undo_a_later_removal(company):
    from datetime import timedelta

    tenant, key = company.tenant, "calendar:event:review-1@acme.example"
    now = timezone.now()
    current = _ics(_vevent((now + timedelta(days=2)).strftime("%Y%m%dT%H%M%SZ"), ["bob@acme.example"], 1))
    assert ingest_all(tenant=tenant, payloads=calendar.ics_payloads(tenant=tenant, data=current))["accepted"]
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
    old = _ics(_vevent((now - timedelta(days=30)).strftime("%Y%m%dT%H%M%SZ"), ["bob@acme.example"], 0))
    ingest_all(tenant=tenant, payloads=calendar.ics_payloads(tenant=tenant, data=old))  # an old export
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
    leave = _message("CA/member/bob/1", A, ["bob@acme.com"], 30, kind="membership_removed", text="", tags={})
    services.event_ingest(tenant=tenant, payload=leave)
    listed = _message("CA/1", A, ["alice@acme.com", "bob@acme.com"], 0)
    services.event_ingest(tenant=tenant, payload=listed, members_observed_at=observed)
    assert A in user_group_keys(alice) and A not in user_group_keys(bob)
    stale = _message(
        "CA/member/alice/2", A, ["alice@acme.com"], 10, kind="membership_removed", text="", tags={}
    )
    services.event_ingest(tenant=tenant, payload=stale)  # older than the list: its effect is in it
    assert A in user_group_keys(alice)


# --- 2. clocks: no write when nothing changed, locks in key order, deadlocks retried ----


@pytest.mark.django_db
def test_unchanged_member_list_writes_its_clock_once(tenant, alice, bob):
    members = ["alice@acme.com", "bob@acme.com"]
    batch = [_message(f"CA/{i}", A, members) for i in range(4)]
    with CaptureQueriesContext(connection) as ctx:
        services.event_ingest_batch(tenant=tenant, payloads=batch)
    clock_writes = [q["sql"] for q in ctx.captured_queries if "connectors_membershipclock" in q["sql"]]
    assert sum(s.startswith(("INSERT", "UPDATE")) for s in clock_writes) == 1
    with CaptureQueriesContext(connection) as ctx:  # all duplicates, the same list
        services.event_ingest_batch(tenant=tenant, payloads=batch)
    clock_queries = [q["sql"] for q in ctx.captured_queries if "connectors_membershipclock" in q["sql"]]
    assert len(clock_queries) == 1  # read once for the batch, not per duplicate, never written


@pytest.mark.django_db(transaction=True)
def test_batches_touching_two_groups_in_opposite_orders_do_not_deadlock(tenant, alice, bob):
    members = ["alice@acme.com", "bob@acme.com"]
    services.event_ingest_batch(
        tenant=tenant, payloads=[_message("CA/0", A, members), _message("CB/0", B, members)]
    )
    outcome = while_locked(
        lambda: services.event_ingest_batch(tenant=tenant, payloads=[_message("CA/1", A, members, 1)]),
        lambda: services.event_ingest_batch(
            tenant=tenant, payloads=[_message("CB/2", B, members, 2), _message("CA/2", A, members, 2)]
        ),
        then=lambda: services.event_ingest_batch(tenant=tenant, payloads=[_message("CB/3", B, members, 3)]),
    )
    assert outcome == {"value": {"accepted": 2, "duplicates": 0}}
    assert Event.objects.count() == 6


@pytest.mark.django_db
def test_push_retries_a_deadlock_then_answers_503(push, tenant, alice, monkeypatch):
    real, calls = ingest._ingest_parsed, []

    def once(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise _deadlock()
        return real(**kwargs)

    monkeypatch.setattr(ingest, "deadlock_pause", lambda attempt: None)
    monkeypatch.setattr(ingest, "_ingest_parsed", once)
    assert push(make_event()).status_code == 202 and len(calls) == 2

    def always(**kwargs):
        raise _deadlock()

    monkeypatch.setattr(ingest, "_ingest_parsed", always)
    response = push(make_event(external_id="C123/2"))
    assert response.status_code == 503
    assert "retry" in response.json()["detail"]


@pytest.mark.django_db
def test_poll_page_retried_after_a_deadlock(company, slack_api, monkeypatch):
    import connectors.importers as importers

    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    monkeypatch.setattr(ingest, "deadlock_pause", lambda attempt: None)
    real, calls = importers.ingest_all, []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise _deadlock()
        return real(**kwargs)

    monkeypatch.setattr(importers, "ingest_all", flaky)
    result = poll_source(source=slack_source(company.tenant, slack_api))
    assert result["state"] == "ok" and result["accepted"] == 5
    assert SyncCursor.objects.get().last_error == ""


# --- 3. last write wins under concurrency -----------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_older_list_waiting_on_a_newer_one_does_not_regrant(tenant, alice, bob):
    both = ["alice@acme.com", "bob@acme.com"]
    services.event_ingest_batch(tenant=tenant, payloads=[_message("CA/0", A, ["alice@acme.com"], 0)])
    outcome = while_locked(
        lambda: services.event_ingest_batch(
            tenant=tenant, payloads=[_message("CA/20", A, ["alice@acme.com"], 20)]
        ),
        lambda: services.event_ingest_batch(tenant=tenant, payloads=[_message("CA/10", A, both, 10)]),
    )
    assert outcome == {"value": {"accepted": 1, "duplicates": 0}}
    assert group_members(tenant=tenant, key=A) == ["alice"]


# --- 4. NUL bytes in ids never block a poller -------------------------------------------


def _with_header(raw: bytes, header: bytes) -> bytes:
    return header + b"\r\n" + raw


@pytest.mark.django_db
def test_imap_messages_with_nul_ids_are_rejected_and_passed(company, monkeypatch):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "pw")
    recall = _with_header(
        mail("r1@acme.example", "Recall: Apollo", "", minute=2), b"X-Almanac-Recall: <m\x001@x>"
    )
    recall_by_subject = mail("r2@acme.example", "Recall: Apo\x00llo", "", minute=3)
    nul_id = mail("m\x002@acme.example", "Zephyr", "kickoff", minute=4)
    box = Mailbox(
        {
            3: mail("m1@acme.example", "Apollo", "ok"),
            4: recall,
            5: recall_by_subject,
            6: nul_id,
            9: mail("m3@acme.example", "Later", "ok", minute=9),
        }
    )
    with imap_server(box) as port:
        source = imap_source(company.tenant, port)
        result = poll_source(source=source)
    assert result["state"] == "ok" and result.get("rejected", 0) >= 1
    state = SyncCursor.objects.get(source=source)
    assert state.cursor["last_uid"] == 9 and state.last_error == ""
    emails = set(Event.objects.filter(kind="email").values_list("external_id", flat=True))
    assert emails == {"m1@acme.example", "m3@acme.example"}
    assert not Event.objects.filter(kind="email_recalled").exists()


@pytest.mark.django_db
def test_calendar_event_with_a_nul_uid_is_rejected(company):
    feed = _ics(_vevent("20261220T100000Z", [], 0, uid="rev\x00iew-1"), _vevent("20261221T100000Z", [], 0))
    counts = ingest_all(
        tenant=company.tenant, payloads=calendar.ics_payloads(tenant=company.tenant, data=feed)
    )
    assert counts["accepted"] == 1 and counts["rejected"] == 1 and "NUL" in counts["last_rejection"]


# --- 5. a Slack message re-read by the poller after the Events API -----------------------


@pytest.mark.django_db
def test_slack_guest_message_from_webhook_then_poller_is_one_version(tenant, alice):
    source = services.source_ensure(tenant=tenant, name="slack", config={"team_id": "T1"})
    message = {
        "type": "message",
        "channel": "C9",
        "channel_type": "channel",
        "user": "U9",
        "text": "from a guest",
        "ts": "1764496800.000100",
    }
    for payload in webhooks.slack_payloads(source=source, event=message):
        services.event_ingest(tenant=tenant, payload=payload)
    guest = sl.SlackUser(id="U9", name="Guest", email="guest@partner.example")
    channel = sl.SlackChannel(id="C9", name="general", public=True, members=["U9"], users={"U9": guest})
    payloads = sl.message_payloads(source_name="slack", channel=channel, message=message)
    assert services.event_ingest_batch(tenant=tenant, payloads=payloads) == {"accepted": 0, "duplicates": 1}
    assert list(Event.objects.values_list("version", "author")) == [(1, "U9")]
    edited = {**message, "text": "edited in the same second"}  # a real change still is a version
    payloads = sl.message_payloads(source_name="slack", channel=channel, message=edited)
    assert services.event_ingest_batch(tenant=tenant, payloads=payloads) == {"accepted": 1, "duplicates": 0}


# --- 6. rows stored before digests existed --------------------------------------------


@pytest.mark.django_db
def test_rows_without_digest_are_duplicates_and_new_rows_keep_same_second_changes(tenant, alice):
    from django.db.migrations.loader import MigrationLoader

    assert ("connectors", "0003_fill_digest") not in MigrationLoader(None).disk_migrations
    services.event_ingest(tenant=tenant, payload=make_event())
    Event.objects.update(digest="")  # as stored before migration 0002
    again = make_event(text="the same message, re-read with today's text")
    assert services.event_ingest_batch(tenant=tenant, payloads=[again]) == {"accepted": 0, "duplicates": 1}
    new = make_event(external_id="C123/2")
    services.event_ingest(tenant=tenant, payload=new)
    changed = {**new, "text": "changed within the same second"}
    assert services.event_ingest_batch(tenant=tenant, payloads=[changed]) == {"accepted": 1, "duplicates": 0}
    assert sorted(Event.objects.filter(external_id="C123/2").values_list("version", flat=True)) == [1, 2]
