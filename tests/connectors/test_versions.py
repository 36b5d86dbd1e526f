"""An item's versions at ingest (`connectors.services.ingest`): changes within one second,
redeliveries and re-reads by another path, rows stored before digests existed."""

import pytest

from connectors.github import normalize as gh
from connectors.models import Event
from connectors.services.importer import ingest_all
from connectors.services.ingest import event_ingest, event_ingest_batch
from connectors.services.sources import source_ensure
from connectors.slack import normalize as sl
from connectors.slack import webhook as slack_webhook
from tests.connectors.conftest import make_event
from wiki.models import Page, PageSection

pytestmark = pytest.mark.django_db


# --- an edit of a closed issue -------------------------------------------------------------


REPO = gh.Repo(full_name="acme/apollo", private=False)


def github_issue(**over) -> dict:
    issue = {
        "number": 7,
        "title": "Ship the billing export",
        "body": "CSV export of invoices",
        "state": "closed",
        "created_at": "2026-11-20T10:00:00Z",
        "updated_at": "2026-11-25T10:00:00Z",
        "closed_at": "2026-11-25T10:00:00Z",
        "html_url": "https://github.com/acme/apollo/issues/7",
        "user": {"login": "carol"},
        "labels": [{"name": "project:Apollo"}],
    }
    return {**issue, **over}


def _ingest_issue(tenant, issue, capture) -> dict:
    with capture(execute=True):  # the wiki compiles on commit
        return ingest_all(
            tenant=tenant, payloads=gh.issue_payloads(source_name="github", repo=REPO, issue=issue)
        )


def test_edit_of_a_closed_issue_shows_and_it_stays_closed(tenant, django_capture_on_commit_callbacks):
    _ingest_issue(tenant, github_issue(), django_capture_on_commit_callbacks)
    assert Page.objects.get(slug="apollo").status == "closed"
    edited = github_issue(body="CSV and XLSX export of invoices", updated_at="2026-11-27T09:00:00Z")
    assert _ingest_issue(tenant, edited, django_capture_on_commit_callbacks)["accepted"] == 2
    page = Page.objects.get(slug="apollo")
    assert page.status == "closed"
    content = page.sections.get().content
    assert "XLSX" in content and "[closed]" in content
    again = _ingest_issue(tenant, edited, django_capture_on_commit_callbacks)
    assert again["accepted"] == 0  # a re-read (poll or webhook) is a duplicate


# --- changes within one second -------------------------------------------------------------


def test_label_added_in_the_second_the_issue_was_opened(tenant, django_capture_on_commit_callbacks):
    opened = github_issue(state="open", closed_at=None, updated_at="2026-11-20T10:00:00Z", labels=[])
    labeled = {**opened, "labels": [{"name": "project:Apollo"}]}
    _ingest_issue(tenant, opened, django_capture_on_commit_callbacks)
    assert _ingest_issue(tenant, labeled, django_capture_on_commit_callbacks)["accepted"] == 1
    assert _ingest_issue(tenant, labeled, django_capture_on_commit_callbacks)["duplicates"] == 1
    assert _ingest_issue(tenant, opened, django_capture_on_commit_callbacks)["duplicates"] == 1
    assert Page.objects.filter(slug="apollo").exists()  # the label's tag reached the wiki


def test_two_slack_edits_in_one_second(tenant, alice, django_capture_on_commit_callbacks):
    channel = sl.SlackChannel(id="C9", name="sales", public=True)

    def edit(text, edited_ts):
        message = {"type": "message", "user": "U1", "text": text, "ts": "1700000000.000100"}
        if edited_ts:
            message["edited"] = {"user": "U1", "ts": edited_ts}
        payloads = sl.message_payloads(source_name="slack", channel=channel, message=message)
        with django_capture_on_commit_callbacks(execute=True):
            return ingest_all(tenant=tenant, payloads=payloads)

    assert edit("Vercel wants 100 seats", None)["accepted"] == 1
    assert edit("Vercel wants 200 seats", "1700000500.100000")["accepted"] == 1  # v1 re-read: a duplicate
    assert edit("Vercel wants 300 seats", "1700000500.900000")["accepted"] == 1
    assert edit("Vercel wants 300 seats", "1700000500.900000") == {"accepted": 0, "duplicates": 2}
    texts = [e.text for e in Event.objects.order_by("occurred_at", "version")]
    assert texts == ["Vercel wants 100 seats", "Vercel wants 200 seats", "Vercel wants 300 seats"]
    [section] = PageSection.objects.filter(container_key="slack:channel:C9")
    assert "300 seats" in section.content and "200 seats" not in section.content


# --- a Slack message re-read by the poller after the Events API ----------------------------


@pytest.mark.django_db
def test_slack_guest_message_from_webhook_then_poller_is_one_version(tenant, alice):
    source = source_ensure(tenant=tenant, name="slack", config={"team_id": "T1"})
    message = {
        "type": "message",
        "channel": "C9",
        "channel_type": "channel",
        "user": "U9",
        "text": "from a guest",
        "ts": "1764496800.000100",
    }
    for payload in slack_webhook.payloads(source=source, event=message):
        event_ingest(tenant=tenant, payload=payload)
    guest = sl.SlackUser(id="U9", name="Guest", email="guest@partner.example")
    channel = sl.SlackChannel(id="C9", name="general", public=True, members=["U9"], users={"U9": guest})
    payloads = sl.message_payloads(source_name="slack", channel=channel, message=message)
    assert event_ingest_batch(tenant=tenant, payloads=payloads) == {"accepted": 0, "duplicates": 1}
    assert list(Event.objects.values_list("version", "author")) == [(1, "U9")]
    edited = {**message, "text": "edited in the same second"}  # a real change still is a version
    payloads = sl.message_payloads(source_name="slack", channel=channel, message=edited)
    assert event_ingest_batch(tenant=tenant, payloads=payloads) == {"accepted": 1, "duplicates": 0}


# --- rows stored before digests existed ----------------------------------------------------


@pytest.mark.django_db
def test_rows_without_digest_are_duplicates_and_new_rows_keep_same_second_changes(tenant, alice):
    from django.db.migrations.loader import MigrationLoader

    assert ("connectors", "0003_fill_digest") not in MigrationLoader(None).disk_migrations
    event_ingest(tenant=tenant, payload=make_event())
    Event.objects.update(digest="")  # as stored before migration 0002
    again = make_event(text="the same message, re-read with today's text")
    assert event_ingest_batch(tenant=tenant, payloads=[again]) == {"accepted": 0, "duplicates": 1}
    new = make_event(external_id="C123/2")
    event_ingest(tenant=tenant, payload=new)
    changed = {**new, "text": "changed within the same second"}
    assert event_ingest_batch(tenant=tenant, payloads=[changed]) == {"accepted": 1, "duplicates": 0}
    assert sorted(Event.objects.filter(external_id="C123/2").values_list("version", flat=True)) == [1, 2]
