"""Ingest fixes: membership on re-reads and by event time, reserved source names, recalls by
their sender only, edits of closed issues, changes within one second, link URLs."""

from email.message import EmailMessage

import pytest

from almanac.models import GroupMembership
from almanac.selectors import group_members, user_group_keys
from connectors.importers import email as mail
from connectors.importers import github as gh
from connectors.importers import ingest_all, slack
from connectors.models import Event
from connectors.pollers import poll_source
from tests.connectors.conftest import make_event
from tests.connectors.test_slack_poller import _source as slack_source
from wiki.models import Page, PageSection

pytestmark = pytest.mark.django_db

CHANNEL = "slack:channel:C123"


def _pushed(push, *events):
    response = push({"events": list(events)})
    assert response.status_code == 202, response.content
    return response.json()


def _member(key, user) -> bool:
    return key in user_group_keys(user)


# --- 1. a re-read with fresh members applies them ----------------------------------------


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
    _pushed(push, make_event())
    counts = _pushed(push, make_event(container={"key": CHANNEL, "members": ["alice@acme.com"]}))
    assert counts == {"accepted": 0, "duplicates": 1}
    assert _member(CHANNEL, alice) and not _member(CHANNEL, bob)
    assert Event.objects.count() == 1


# --- 2. last write by event time wins ----------------------------------------------------


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
    _pushed(push, _change("membership_added", "bob@acme.com", 10))
    _pushed(push, _change("membership_removed", "bob@acme.com", 20))
    _pushed(push, _change("membership_added", "bob@acme.com", 15))  # a retry, delivered late
    assert not _member(CHANNEL, bob)
    _pushed(push, _change("membership_added", "bob@acme.com", 30))
    assert _member(CHANNEL, bob)


def test_an_older_member_list_does_not_regrant(push, alice, bob):
    members = ["alice@acme.com", "bob@acme.com"]
    _pushed(push, make_event(occurred_at="2026-11-30T10:00:00Z"))  # alice and bob
    _pushed(push, _change("membership_removed", "bob@acme.com", 20))
    late = make_event(external_id="C123/late", occurred_at="2026-11-30T10:15:00Z")
    _pushed(push, late)  # written before bob left, delivered after
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
    _pushed(push, newer, older)
    assert not _member(CHANNEL, bob)


# --- 3. reserved source names -------------------------------------------------------------


@pytest.mark.parametrize("name", ["builtin", "admin", "Builtin"])
def test_reserved_source_name_is_refused(push, alice, name):
    response = push(make_event(source=name, container={"key": "crm:deal:1", "members": ["alice@acme.com"]}))
    assert response.status_code == 422
    assert "reserved" in response.json()["detail"]
    assert not GroupMembership.objects.filter(group__key="crm:deal:1").exists()


# --- 4. only the sender recalls an e-mail -------------------------------------------------


def _mail(*, sender, msgid, subject, headers=None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "bob@acme.com", subject
    msg["Message-ID"], msg["Date"] = f"<{msgid}>", "Mon, 30 Nov 2026 10:00:00 +0000"
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content("Vercel price is 40k")
    return msg


def _import(tenant, msg) -> dict:
    return ingest_all(
        tenant=tenant, payloads=mail.message_payloads(tenant=tenant, source_name="email", msg=msg)
    )


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


# --- 5. an edit of a closed issue ---------------------------------------------------------

REPO = gh.Repo(full_name="acme/apollo", private=False)


def _issue(**over) -> dict:
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
    _ingest_issue(tenant, _issue(), django_capture_on_commit_callbacks)
    assert Page.objects.get(slug="apollo").status == "closed"
    edited = _issue(body="CSV and XLSX export of invoices", updated_at="2026-11-27T09:00:00Z")
    assert _ingest_issue(tenant, edited, django_capture_on_commit_callbacks)["accepted"] == 2
    page = Page.objects.get(slug="apollo")
    assert page.status == "closed"
    content = page.sections.get().content
    assert "XLSX" in content and "[closed]" in content
    again = _ingest_issue(tenant, edited, django_capture_on_commit_callbacks)
    assert again["accepted"] == 0  # a re-read (poll or webhook) is a duplicate


# --- 6. changes within one second ---------------------------------------------------------


def test_label_added_in_the_second_the_issue_was_opened(tenant, django_capture_on_commit_callbacks):
    opened = _issue(state="open", closed_at=None, updated_at="2026-11-20T10:00:00Z", labels=[])
    labeled = {**opened, "labels": [{"name": "project:Apollo"}]}
    _ingest_issue(tenant, opened, django_capture_on_commit_callbacks)
    assert _ingest_issue(tenant, labeled, django_capture_on_commit_callbacks)["accepted"] == 1
    assert _ingest_issue(tenant, labeled, django_capture_on_commit_callbacks)["duplicates"] == 1
    assert _ingest_issue(tenant, opened, django_capture_on_commit_callbacks)["duplicates"] == 1
    assert Page.objects.filter(slug="apollo").exists()  # the label's tag reached the wiki


def test_two_slack_edits_in_one_second(tenant, alice, django_capture_on_commit_callbacks):
    channel = slack.SlackChannel(id="C9", name="sales", public=True)

    def edit(text, edited_ts):
        message = {"type": "message", "user": "U1", "text": text, "ts": "1700000000.000100"}
        if edited_ts:
            message["edited"] = {"user": "U1", "ts": edited_ts}
        payloads = slack.message_payloads(source_name="slack", channel=channel, message=message)
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


# --- 7. link URLs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,x", "//evil.example/x", "https://"]
)
def test_event_url_must_be_http(push, alice, url):
    response = push(make_event(url=url))
    assert response.status_code == 422
    assert "url" in response.json()["detail"]
    assert not Event.objects.exists()


def test_event_url_http_or_empty_is_stored(push, alice):
    assert push(make_event(url="https://acme.slack.com/archives/C123/p1")).status_code == 202
    assert push(make_event(external_id="C123/2", url="")).status_code == 202


def test_github_importer_drops_a_non_http_link(tenant):
    issue = _issue(html_url="javascript:alert(1)", url="javascript:alert(2)")
    assert ingest_all(
        tenant=tenant, payloads=gh.issue_payloads(source_name="github", repo=REPO, issue=issue)
    )["accepted"]
    assert set(Event.objects.values_list("url", flat=True)) == {""}
