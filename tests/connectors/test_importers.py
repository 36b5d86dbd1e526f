import os
import shutil
from email.message import EmailMessage

import pytest
from django.core.management import call_command

from almanac.models import GroupMembership
from almanac.selectors import group_members, user_group_keys
from connectors import demo
from connectors.calendar.normalize import ics_payloads
from connectors.email.importer import mailbox_payloads
from connectors.email.normalize import message_payloads, parse_bytes
from connectors.github.importer import export_payloads as github_export_payloads
from connectors.github.normalize import issue_payloads
from connectors.models import Event, ExternalIdentity
from connectors.notes.importer import notes_payloads
from connectors.services.importer import ingest_all
from connectors.slack.importer import export_payloads as slack_export_payloads
from tests.connectors.conftest import DEMO
from tests.connectors.test_membership import ics, vevent
from tests.connectors.test_versions import REPO, github_issue

pytestmark = pytest.mark.django_db


def _members(tenant, key):
    return group_members(tenant=tenant, key=key)


def test_slack_export_zip_channels_threads_edits(company, slack_zip):
    tenant = company.tenant
    counts = ingest_all(tenant=tenant, payloads=slack_export_payloads(tenant=tenant, path=slack_zip))
    assert counts["duplicates"] == 0
    events = Event.objects.filter(source__name="slack")
    # 13 content messages (the channel_join is not content) + 1 edit
    assert events.filter(kind="message").count() == 13
    edit = events.get(kind="message_changed")
    assert edit.version > 1 and "宁德时代" in edit.text
    assert events.filter(external_id=edit.external_id, version=1).exists()
    reply = events.get(text__startswith="收到")
    assert reply.thread_key == events.get(text__startswith="大家好").thread_key
    assert reply.thread_key.startswith("slack:thread:C01GENERAL/")
    finance = events.filter(container_key="slack:channel:G01FININT").first()
    assert finance.container_public is False and finance.container_name == "#finance-internal"
    assert events.filter(container_key="slack:channel:C01GENERAL").first().container_public is True
    assert _members(tenant, "slack:channel:G01FININT") == ["bob", "wangwei"]
    assert "slack:channel:G01FININT" not in user_group_keys(company.users["alice"])
    assert "@Carol Wu" in events.get(text__contains="Vercel confirmed").text


def test_slack_export_reimport_is_all_duplicates(company, slack_zip):
    first = ingest_all(
        tenant=company.tenant, payloads=slack_export_payloads(tenant=company.tenant, path=slack_zip)
    )
    again = ingest_all(
        tenant=company.tenant, payloads=slack_export_payloads(tenant=company.tenant, path=slack_zip)
    )
    assert again == {"accepted": 0, "duplicates": first["accepted"]}


def test_slack_guest_is_recorded_not_granted(company, slack_zip):
    ingest_all(tenant=company.tenant, payloads=slack_export_payloads(tenant=company.tenant, path=slack_zip))
    guest = ExternalIdentity.objects.get(source_kind="slack", handle="U06GUEST")
    assert guest.user is None and guest.display_name == "Lee (Vercel)"
    assert ExternalIdentity.objects.get(handle="U02BOB").user == company.users["bob"]
    assert _members(company.tenant, "slack:channel:C02SALES") == ["alice", "carol", "wangwei"]


def test_mbox_threads_participants_and_recall(company):
    tenant = company.tenant
    ingest_all(tenant=tenant, payloads=mailbox_payloads(tenant=tenant, path=DEMO / "mailbox.mbox"))
    mails = Event.objects.filter(source__name="email", kind="email")
    vercel = mails.filter(title="Apollo pilot for Vercel — next steps")
    assert vercel.count() == 3 and len({e.container_key for e in vercel}) == 1
    key = vercel.first().container_key
    assert key.startswith("email:thread:")
    assert _members(tenant, key) == ["alice", "carol"]  # lee@vercel.example is unknown: nothing granted
    assert "Thanks for the call" not in mails.get(external_id="vercel-apollo-2@vercel.example").text
    recall = Event.objects.get(kind="email_recalled")
    assert recall.external_id == "catl-zephyr-1@acme.example" and recall.version == 2
    assert recall.container_key == mails.get(external_id="catl-zephyr-1@acme.example").container_key
    assert mails.filter(title__startswith="Recall").count() == 0
    assert mails.filter(external_id="catl-zephyr-2@acme.example").exists()


def test_mbox_reimport_and_single_eml(company, tmp_path):
    tenant = company.tenant
    first = ingest_all(tenant=tenant, payloads=mailbox_payloads(tenant=tenant, path=DEMO / "mailbox.mbox"))
    again = ingest_all(tenant=tenant, payloads=mailbox_payloads(tenant=tenant, path=DEMO / "mailbox.mbox"))
    assert again["accepted"] == 0 and again["duplicates"] == first["accepted"]
    eml = tmp_path / "one.eml"
    eml.write_bytes(
        b"Message-ID: <solo@x.example>\nFrom: dave@acme.example\nTo: carol@acme.example\n"
        b"Subject: =?utf-8?b?5rWL6K+V?=\nDate: Mon, 09 Nov 2026 10:00:00 +0000\n\nhello\n"
    )
    ingest_all(tenant=tenant, payloads=mailbox_payloads(tenant=tenant, path=eml))
    assert Event.objects.get(external_id="solo@x.example").title == "测试"


def test_one_unreadable_message_does_not_stop_an_mbox_import(company, tmp_path):
    box = tmp_path / "hostile.mbox"
    box.write_bytes(
        b"From bad@x Mon Nov  9 10:00:00 2026\nMessage-ID: <bad@x.example>\nFrom: bad@acme.example\n"
        b"To: <a@[1.2.3.4>\nSubject: broken\nDate: Mon, 09 Nov 2026 10:00:00 +0000\n\nbroken\n\n"
        b"From ok@x Mon Nov  9 11:00:00 2026\nMessage-ID: <ok2@x.example>\nFrom: dave@acme.example\n"
        b"To: carol@acme.example\nSubject: fine\nDate: Mon, 09 Nov 2026 11:00:00 +0000\n\nfine\n"
    )
    tenant = company.tenant
    result = ingest_all(tenant=tenant, payloads=mailbox_payloads(tenant=tenant, path=box))
    assert result["rejected"] == 1
    assert Event.objects.filter(external_id="ok2@x.example").exists()


def test_a_note_saved_with_a_byte_order_mark_keeps_its_front_matter(company, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "bom.md").write_bytes(
        "\ufeff---\ntitle: Vercel sync\nattendees: [alice@acme.example]\n---\nVercel wants SSO\n".encode()
    )
    tenant = company.tenant
    ingest_all(tenant=tenant, payloads=notes_payloads(tenant=tenant, folder=folder))
    event = Event.objects.get(kind="meeting_note")
    assert event.title == "Vercel sync" and event.text.strip() == "Vercel wants SSO"


def test_explicit_recall_header(company):
    tenant = company.tenant
    original = parse_bytes(
        b"Message-ID: <o1@acme.example>\nFrom: bob@acme.example\nTo: alice@acme.example\n"
        b"Subject: numbers\nDate: Mon, 09 Nov 2026 10:00:00 +0000\n\nwrong numbers\n"
    )
    recall = parse_bytes(
        b"Message-ID: <r1@acme.example>\nFrom: bob@acme.example\nTo: alice@acme.example\n"
        b"X-Almanac-Recall: <o1@acme.example>\nSubject: please ignore\nDate: Mon, 09 Nov 2026 10:05:00 +0000\n\nx\n"
    )
    for msg in (original, recall):
        ingest_all(tenant=tenant, payloads=message_payloads(tenant=tenant, source_name="email", msg=msg))
    assert Event.objects.get(kind="email_recalled").external_id == "o1@acme.example"


def test_ics_import_attendees_tags_cancel(company):
    tenant = company.tenant
    data = (DEMO / "calendar.ics").read_bytes()
    counts = ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=data))
    assert counts == {"accepted": 4, "duplicates": 0}
    review = Event.objects.get(external_id="apollo-vercel-review@acme.example")
    assert review.kind == "calendar_event" and review.tags == {"customer": "Vercel", "project": "Apollo"}
    assert review.container_key == "calendar:event:apollo-vercel-review@acme.example"
    assert _members(tenant, review.container_key) == ["alice", "carol"]
    assert Event.objects.get(external_id="huawei-onprem-call@acme.example").kind == "message_deleted"
    assert ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=data))["accepted"] == 0
    moved = data.replace(b"DTSTART:20261120T150000Z", b"DTSTART:20261121T150000Z").replace(
        b"SEQUENCE:0", b"SEQUENCE:1", 1
    )
    assert ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=moved))["accepted"] == 1
    assert Event.objects.filter(external_id="apollo-vercel-review@acme.example").count() == 2


def test_notes_import_and_edit_is_new_version(company, tmp_path):
    tenant = company.tenant
    folder = tmp_path / "notes"
    shutil.copytree(DEMO / "notes", folder)
    counts = ingest_all(tenant=tenant, payloads=notes_payloads(tenant=tenant, folder=folder))
    assert counts == {"accepted": 4, "duplicates": 0}
    note = Event.objects.get(external_id="2026-11-16-zephyr-catl-kickoff.md")
    assert note.kind == "meeting_note" and note.tags == {"customer": "宁德时代", "project": "Zephyr"}
    assert (
        note.title == "Zephyr 启动会纪要（宁德时代）" and note.occurred_at.date().isoformat() == "2026-11-16"
    )
    assert _members(tenant, note.container_key) == ["carol", "dave", "wangwei"]
    budget = Event.objects.get(external_id="2026-11-18-q4-budget.md")
    assert "alice" not in _members(tenant, budget.container_key)
    path = folder / "2026-11-16-zephyr-catl-kickoff.md"
    path.write_text(path.read_text() + "\n5. 新增：每周例会。\n")
    again = ingest_all(tenant=tenant, payloads=notes_payloads(tenant=tenant, folder=folder))
    assert again == {"accepted": 1, "duplicates": 3}
    assert [e.version for e in Event.objects.filter(external_id=note.external_id).order_by("version")] == [
        1,
        2,
    ]
    # Reverted to the first text: a third version, the latest (not a duplicate of the first).
    original = (DEMO / "notes" / path.name).read_text()
    path.write_text(original)
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 60))
    reverted = ingest_all(tenant=tenant, payloads=notes_payloads(tenant=tenant, folder=folder))
    assert reverted == {"accepted": 1, "duplicates": 3}
    latest = Event.objects.filter(external_id=note.external_id).latest("version")
    assert latest.version == 3 and "每周例会" not in latest.text


def test_github_export_issues_prs_comments_members(company):
    tenant = company.tenant
    ingest_all(
        tenant=tenant, payloads=github_export_payloads(tenant=tenant, path=DEMO / "github_issues.json")
    )
    events = Event.objects.filter(source__name="github")
    closed = events.get(kind="issue_closed")
    assert closed.external_id == "acme/apollo#12" and closed.tags == {
        "customer": "Vercel",
        "project": "Apollo",
    }
    assert events.get(kind="pull_request").external_id == "acme/apollo#21"
    comment = events.get(external_id="acme/apollo#12/comment/9001")
    assert comment.thread_key == "github:issue:acme/apollo#12" and comment.author == "dave-acme"
    assert events.filter(external_id="acme/apollo#15", kind="issue").count() == 2  # created + updated
    assert (
        ExternalIdentity.objects.get(source_kind="github", handle="carol-acme").user == company.users["carol"]
    )
    assert _members(tenant, "github:repo:acme/apollo") == ["alice", "carol", "dave"]
    assert events.first().container_public is False


def test_import_commands_summary_and_rerun(company, slack_zip, capsys):
    call_command("import_slack", str(slack_zip), "--no-progress")
    assert "14 new events, 0 duplicates" in capsys.readouterr().out
    call_command("import_slack", str(slack_zip), "--tenant", "acme", "--no-progress")
    assert "0 new events, 14 duplicates" in capsys.readouterr().out
    call_command("import_mbox", str(DEMO / "mailbox.mbox"), "--no-progress")
    call_command("import_ics", str(DEMO / "calendar.ics"), "--no-progress")
    call_command("import_notes", str(DEMO / "notes"), "--no-progress")
    call_command("import_github", str(DEMO / "github_issues.json"), "--no-progress")
    out = capsys.readouterr().out
    assert "email:" in out and "calendar: 4 new" in out and "notes: 4 new" in out and "github:" in out


def test_import_command_errors_are_clean(company, tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="not a folder"):
        call_command("import_notes", str(tmp_path / "missing"), "--no-progress")
    with pytest.raises(CommandError, match="no tenant"):
        call_command("import_ics", str(DEMO / "calendar.ics"), "--tenant", "nope")


def test_demo_load_is_idempotent(company):
    first = demo.load(company)
    count = Event.objects.count()
    second = demo.load(company)
    assert Event.objects.count() == count > 40
    assert second.startswith("0 events imported")
    assert first.startswith(f"{count} events imported")
    assert GroupMembership.objects.filter(group__key="slack:channel:G01FININT").count() == 2


def test_invalid_item_is_skipped_and_counted_not_fatal(company, tmp_path, capsys):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "good.md").write_text("---\ntitle: Apollo sync\nattendees: [carol@acme.example]\n---\nok\n")
    (folder / "bad.md").write_text("---\ntitle: bad\n---\nnul \x00 byte\n")
    call_command("import_notes", str(folder), "--no-progress")
    captured = capsys.readouterr()
    assert "1 new events, 0 duplicates, 1 rejected" in captured.out
    assert "NUL" in captured.err
    assert (
        Event.objects.filter(title="Apollo sync").exists() and not Event.objects.filter(title="bad").exists()
    )


def test_import_ics_from_feed_url(company, capsys):
    from tests.connectors.servers import http_server

    data = (DEMO / "calendar.ics").read_bytes()
    with http_server(lambda request: (200, {"Content-Type": "text/calendar"}, data)) as server:
        call_command("import_ics", f"{server.url}/cal.ics", "--no-progress")
    assert "calendar: 4 new events" in capsys.readouterr().out


def test_slack_export_inside_a_top_folder(company, tmp_path):
    import zipfile

    path = tmp_path / "wrapped.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted((DEMO / "slack").rglob("*.json")):
            archive.write(file, "Acme Slack export Nov 2026/" + file.relative_to(DEMO / "slack").as_posix())
    counts = ingest_all(
        tenant=company.tenant, payloads=slack_export_payloads(tenant=company.tenant, path=path)
    )
    assert counts == {"accepted": 14, "duplicates": 0}


WEEKLY = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:apollo-weekly@acme.example
DTSTART:20261102T090000Z
DTEND:20261102T093000Z
RRULE:FREQ=WEEKLY;COUNT=6
EXDATE:20261116T090000Z
SUMMARY:Apollo weekly sync
ORGANIZER;CN=Alice Chen:mailto:alice@acme.example
ATTENDEE;CN=Carol Wu:mailto:carol@acme.example
SEQUENCE:0
END:VEVENT
BEGIN:VEVENT
UID:apollo-weekly@acme.example
RECURRENCE-ID:20261123T090000Z
DTSTART:20261124T140000Z
DTEND:20261124T143000Z
SUMMARY:Apollo weekly sync (moved to Tuesday)
ORGANIZER;CN=Alice Chen:mailto:alice@acme.example
SEQUENCE:1
END:VEVENT
BEGIN:VEVENT
UID:standup@acme.example
DTSTART:20250106T093000Z
RRULE:FREQ=DAILY
SUMMARY:Daily standup
ORGANIZER;CN=Alice Chen:mailto:alice@acme.example
END:VEVENT
END:VCALENDAR
"""


def test_ics_recurring_events_become_occurrences(company):
    from datetime import UTC, datetime

    tenant = company.tenant
    now = datetime(2026, 12, 1, tzinfo=UTC)
    payloads = list(ics_payloads(tenant=tenant, data=WEEKLY, now=now))
    weekly = sorted(p["external_id"] for p in payloads if p["external_id"].startswith("apollo-weekly"))
    # six weeks from 2 Nov, minus the EXDATE (16 Nov); 23 Nov comes from its override.
    assert weekly == [
        f"apollo-weekly@acme.example/2026-{day}T09:00:00+00:00"
        for day in ("11-02", "11-09", "11-23", "11-30", "12-07")
    ]
    moved = next(p for p in payloads if p["external_id"].endswith("2026-11-23T09:00:00+00:00"))
    assert moved["title"] == "Apollo weekly sync (moved to Tuesday)" and moved["occurred_at"].startswith(
        "2026-11-24T14:00"
    )
    nine = next(p for p in payloads if p["external_id"].endswith("2026-11-09T09:00:00+00:00"))
    assert nine["occurred_at"].startswith("2026-11-09T09:00") and "09:00 UTC – 09:30" in nine["text"]
    # An endless series: only the window around now (90 days back, 60 ahead): 2 Sep–29 Jan.
    daily = [p for p in payloads if p["external_id"].startswith("standup@")]
    assert len(daily) == 150
    assert min(p["occurred_at"] for p in daily).startswith("2026-09-02")
    counts = ingest_all(tenant=tenant, payloads=iter(payloads))
    assert counts["accepted"] == len(payloads)
    again = ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=WEEKLY, now=now))
    assert again["accepted"] == 0  # re-import is idempotent


def test_ics_an_override_listing_other_people_has_a_group_of_its_own(company):
    """The series' group keeps the series' people: an override that lists the same people
    is in it; one that lists others (a cancellation with its organizer only, an invitee
    added), or whose series the feed lacks, has its own `…/<recurrence id>`."""
    from datetime import UTC, datetime

    tenant, series = company.tenant, "calendar:event:sync@acme.example"
    master = [*vevent("20261102T090000Z", ["bob@acme.example"], 0, uid="sync@acme.example")]
    master.insert(-1, "RRULE:FREQ=WEEKLY;COUNT=4")

    def override(day, attendees, *extra):
        lines = vevent(f"202611{day}T090000Z", attendees, 1, uid="sync@acme.example")
        return [*lines[:-1], f"RECURRENCE-ID:202611{day}T090000Z", *extra, "END:VEVENT"]

    same = override("09", ["bob@acme.example"])
    cancelled = override("16", [], "STATUS:CANCELLED")
    added = override("23", ["bob@acme.example", "carol@acme.example"])
    now = datetime(2026, 11, 20, tzinfo=UTC)
    payloads = list(ics_payloads(tenant=tenant, data=ics(master, same, cancelled, added), now=now))
    keys = {p["external_id"].rpartition("/")[2][:10]: p["container"]["key"] for p in payloads}
    assert keys == {
        "2026-11-02": series,
        "2026-11-09": series,
        "2026-11-16": f"{series}/2026-11-16T09:00:00+00:00",
        "2026-11-23": f"{series}/2026-11-23T09:00:00+00:00",
    }
    assert all(p["thread_key"] == series for p in payloads)  # one series, one thread
    ingest_all(tenant=tenant, payloads=iter(payloads))
    assert _members(tenant, series) == ["alice", "bob"]
    assert _members(tenant, keys["2026-11-16"]) == ["alice"]
    assert _members(tenant, keys["2026-11-23"]) == ["alice", "bob", "carol"]
    # An override alone (its series not in the feed): its own group, the series' untouched.
    alone = list(ics_payloads(tenant=tenant, data=ics(override("09", [])), now=now))
    assert [p["container"]["key"] for p in alone] == [f"{series}/2026-11-09T09:00:00+00:00"]


ALL_DAY_AND_FLOATING = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Google Inc//Google Calendar 70.9054//EN
BEGIN:VEVENT
UID:allday@acme.example
DTSTART;VALUE=DATE:20261102
DTEND;VALUE=DATE:20261103
RRULE:FREQ=WEEKLY;UNTIL=20261201;BYDAY=MO
EXDATE;VALUE=DATE:20261109
SUMMARY:Planning day
ORGANIZER:mailto:alice@acme.example
END:VEVENT
BEGIN:VEVENT
UID:floating@acme.example
DTSTART:20261102T100000
DTEND:20261102T110000
RRULE:FREQ=WEEKLY;UNTIL=20261123T100000;BYDAY=MO
SUMMARY:Floating standup
ORGANIZER:mailto:alice@acme.example
END:VEVENT
END:VCALENDAR
"""


def test_ics_all_day_and_floating_series_with_until_are_expanded(company):
    """RFC 5545: with a DATE or floating DTSTART, UNTIL is a date or floating too."""
    from datetime import UTC, datetime

    now = datetime(2026, 12, 1, tzinfo=UTC)
    ids = sorted(
        p["external_id"] for p in ics_payloads(tenant=company.tenant, data=ALL_DAY_AND_FLOATING, now=now)
    )
    assert ids == [
        *(f"allday@acme.example/2026-{day}T00:00:00+00:00" for day in ("11-02", "11-16", "11-23", "11-30")),
        *(f"floating@acme.example/2026-{day}T10:00:00+00:00" for day in ("11-02", "11-09", "11-16", "11-23")),
    ]


def test_ics_broken_rrule_still_imports_the_event_once(company):
    broken = WEEKLY.replace("RRULE:FREQ=WEEKLY;COUNT=6", "RRULE:FREQ=SOMETIMES")
    payloads = list(ics_payloads(tenant=company.tenant, data=broken))
    assert "apollo-weekly@acme.example" in {p["external_id"] for p in payloads}


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["import_slack", "/no/such/export.zip"], "no such file or folder"),
        (["import_slack", str(DEMO / "notes")], "not a Slack export"),
        (["import_slack", str(DEMO / "github_issues.json")], "not a zip file"),
        (["import_mbox", "/no/such/mbox"], "no such file or folder"),
        (["import_ics", str(DEMO / "github_issues.json")], r"not an iCalendar \(\.ics\) feed"),
        (["import_ics", "http://127.0.0.1:1/team.ics"], "Connection refused"),
        (["import_slack", str(DEMO / "slack"), "--source", "builtin"], "not a reserved name"),
    ],
)
def test_an_import_of_the_wrong_thing_is_a_clear_error_and_creates_nothing(company, args, error):
    from django.core.management import CommandError

    from connectors.models import Source

    before = set(Source.objects.values_list("name", flat=True))
    with pytest.raises(CommandError, match=error) as info:
        call_command(*args, "--no-progress")
    assert len(str(info.value)) < 700  # a line, not the file
    assert set(Source.objects.values_list("name", flat=True)) == before
    assert not Event.objects.exists()


# --- e-mail: only the sender recalls -------------------------------------------------------


def _mail(*, sender, msgid, subject, headers=None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "bob@acme.com", subject
    msg["Message-ID"], msg["Date"] = f"<{msgid}>", "Mon, 30 Nov 2026 10:00:00 +0000"
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content("Vercel price is 40k")
    return msg


def _import(tenant, msg) -> dict:
    return ingest_all(tenant=tenant, payloads=message_payloads(tenant=tenant, source_name="email", msg=msg))


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Almanac-Recall": "<orig@acme.com>"},
        {"In-Reply-To": "<orig@acme.com>", "References": "<orig@acme.com>"},
        {},  # by subject
    ],
)
def test_nobody_recalls_another_persons_email(tenant, alice, bob, headers):
    _import(tenant, _mail(sender="Alice <alice@acme.com>", msgid="orig@acme.com", subject="Pricing"))
    recall = _mail(sender="bob@acme.com", msgid="r1@acme.com", subject="Recall: Pricing", headers=headers)
    _import(tenant, recall)
    assert not Event.objects.filter(kind="email_recalled").exists()
    own = _mail(sender="ALICE@acme.com", msgid="r2@acme.com", subject="Recall: Pricing", headers=headers)
    _import(tenant, own)
    assert Event.objects.get(kind="email_recalled").external_id == "orig@acme.com"


# --- links and ids that cannot be stored ---------------------------------------------------


def test_github_importer_drops_a_non_http_link(tenant):
    issue = github_issue(html_url="javascript:alert(1)", url="javascript:alert(2)")
    assert ingest_all(tenant=tenant, payloads=issue_payloads(source_name="github", repo=REPO, issue=issue))[
        "accepted"
    ]
    assert set(Event.objects.values_list("url", flat=True)) == {""}


@pytest.mark.django_db
def test_calendar_event_with_a_nul_uid_is_rejected(company):
    feed = ics(vevent("20261220T100000Z", [], 0, uid="rev\x00iew-1"), vevent("20261221T100000Z", [], 0))
    counts = ingest_all(tenant=company.tenant, payloads=ics_payloads(tenant=company.tenant, data=feed))
    assert counts["accepted"] == 1 and counts["rejected"] == 1 and "NUL" in counts["last_rejection"]


def test_import_command_reports_compiled_events_and_compiles_with_compile(company, slack_zip, capsys):
    call_command("import_slack", str(slack_zip), "--no-progress")  # nothing compiles on commit here
    assert "slack: 0/14 of these events compiled into the wiki" in capsys.readouterr().out
    call_command("import_mbox", str(DEMO / "mailbox.mbox"), "--no-progress", "--compile")
    out = capsys.readouterr().out
    assert "compiled" in out and "events/s, ETA 0s" in out  # the batch compile's progress
    assert not Event.objects.filter(state="pending").exists()
