import hashlib
import hmac
import json
import time

import pytest

from almanac.selectors import user_group_keys
from connectors.models import Event
from connectors.services.identity import identity_upsert
from connectors.services.importer import ingest_all
from connectors.services.sources import source_ensure
from connectors.slack.importer import export_payloads
from tests.connectors.conftest import DEMO

pytestmark = pytest.mark.django_db

SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
GITHUB_SECRET = "gh-webhook-secret"


@pytest.fixture(autouse=True)
def _secrets(settings):
    settings.SLACK_SIGNING_SECRET = SLACK_SECRET
    settings.GITHUB_WEBHOOK_SECRET = GITHUB_SECRET


@pytest.fixture
def slack_source(company):
    source = source_ensure(tenant=company.tenant, name="slack", config={"team_id": "T0ACME"})
    ingest_all(tenant=company.tenant, payloads=export_payloads(tenant=company.tenant, path=DEMO / "slack"))
    return source


def slack_post(client, body: dict, *, timestamp=None, secret=SLACK_SECRET):
    raw = json.dumps(body)
    timestamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = (
        "v0=" + hmac.new(secret.encode(), f"v0:{timestamp}:{raw}".encode(), hashlib.sha256).hexdigest()
    )
    return client.post(
        "/api/v1/connectors/slack/events",
        raw,
        content_type="application/json",
        headers={"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature},
    )


def callback(event: dict) -> dict:
    return {"type": "event_callback", "team_id": "T0ACME", "event_id": "Ev1", "event": event}


def test_slack_url_verification(client, slack_source):
    response = slack_post(client, {"type": "url_verification", "challenge": "3eZbrw1aB"})
    assert response.status_code == 200 and response.json() == {"challenge": "3eZbrw1aB"}


def test_slack_message_event_is_ingested(client, slack_source):
    ts = f"{time.time():.6f}"
    event = {
        "type": "message",
        "channel": "G01FININT",
        "channel_type": "group",
        "user": "U02BOB",
        "text": "新的预算 <@U04WANGWEI>",
        "ts": ts,
    }
    response = slack_post(client, callback(event))
    assert response.status_code == 200 and response.json()["accepted"] == 1
    stored = Event.objects.get(external_id=f"G01FININT/{ts}")
    assert stored.author == "bob@acme.example" and stored.text == "新的预算 @王伟"
    assert stored.container_public is False and stored.container_name == "#finance-internal"
    assert slack_post(client, callback(event)).json()["duplicates"] == 1  # Slack retries are duplicates


def test_slack_bad_signature_is_refused(client, slack_source):
    event = {
        "type": "message",
        "channel": "C01GENERAL",
        "user": "U01ALICE",
        "text": "x",
        "ts": "1793610000.000001",
    }
    response = slack_post(client, callback(event), secret="wrong-secret")
    assert response.status_code == 401 and "signature" in response.json()["detail"]
    assert not Event.objects.filter(external_id="C01GENERAL/1793610000.000001").exists()


def test_slack_old_timestamp_is_refused_as_replay(client, slack_source):
    event = {
        "type": "message",
        "channel": "C01GENERAL",
        "user": "U01ALICE",
        "text": "x",
        "ts": "1793610000.000002",
    }
    response = slack_post(
        client, callback(event), timestamp=int(time.time()) - 600
    )  # correctly signed, 10 min old
    assert response.status_code == 401 and "replay" in response.json()["detail"]
    assert not Event.objects.filter(external_id="C01GENERAL/1793610000.000002").exists()


def test_slack_unconfigured_secret_refuses(client, slack_source, settings):
    settings.SLACK_SIGNING_SECRET = ""
    assert slack_post(client, {"type": "url_verification", "challenge": "x"}).status_code == 503


def test_slack_changed_and_deleted(client, slack_source):
    original = Event.objects.filter(container_key="slack:channel:C02SALES", kind="message").first()
    msg_ts = original.external_id.split("/")[1]
    now = f"{time.time():.6f}"
    changed = {
        "type": "message",
        "subtype": "message_changed",
        "channel": "C02SALES",
        "ts": now,
        "event_ts": now,
        "message": {
            "type": "message",
            "user": "U01ALICE",
            "text": "Vercel wants 250 seats",
            "ts": msg_ts,
            "edited": {"user": "U01ALICE", "ts": now},
        },
    }
    assert slack_post(client, callback(changed)).json()["accepted"] == 1
    assert (
        Event.objects.get(external_id=original.external_id, kind="message_changed").text
        == "Vercel wants 250 seats"
    )
    deleted = {
        "type": "message",
        "subtype": "message_deleted",
        "channel": "C02SALES",
        "deleted_ts": msg_ts,
        "ts": now,
        "event_ts": now,
    }
    assert slack_post(client, callback(deleted)).json()["accepted"] == 1
    versions = list(
        Event.objects.filter(external_id=original.external_id)
        .order_by("version")
        .values_list("kind", flat=True)
    )
    assert versions == ["message", "message_changed", "message_deleted"]


def test_slack_a_channel_only_webhooks_have_seen_still_gets_a_topic_page(client, slack_source):
    from wiki.models import PageSection
    from wiki.services.backlog import compile_pending

    now = f"{time.time():.6f}"
    message = {"type": "message", "channel": "C0HOOKONLY", "channel_type": "channel", "user": "U01ALICE",
               "text": "the office coffee machine is fixed", "ts": now, "event_ts": now}  # fmt: skip
    assert slack_post(client, callback(message)).json()["accepted"] == 1
    compile_pending()
    (section,) = PageSection.objects.filter(container_key="slack:channel:C0HOOKONLY")
    assert "coffee machine" in section.content and section.page.title == "#C0HOOKONLY"


def test_slack_deleting_a_thread_parent_sends_a_tombstone_that_deletes_it(client, slack_source):
    """A parent with replies is not deleted but replaced by a stub: Slack sends
    `message_changed` whose message has subtype `tombstone`."""
    original = Event.objects.filter(container_key="slack:channel:C02SALES", kind="message").first()
    msg_ts = original.external_id.split("/")[1]
    now = f"{time.time():.6f}"
    stub = {"type": "message", "subtype": "tombstone", "text": "This message was deleted.",
            "user": "USLACKBOT", "hidden": True, "ts": msg_ts, "thread_ts": msg_ts, "reply_count": 1}  # fmt: skip
    changed = {"type": "message", "subtype": "message_changed", "hidden": True, "channel": "C02SALES",
               "ts": now, "event_ts": now, "message": stub}  # fmt: skip
    assert slack_post(client, callback(changed)).json()["accepted"] == 1
    (deletion,) = Event.objects.filter(external_id=original.external_id, kind="message_deleted")
    assert deletion.text == ""
    assert (
        slack_post(client, callback({**changed, "event_ts": f"{time.time() + 5:.6f}"})).json()["accepted"]
        == 0
    )


def test_slack_member_left_takes_effect_on_next_read(client, slack_source, company):
    bob = company.users["bob"]
    assert "slack:channel:G01FININT" in user_group_keys(bob)
    left = {
        "type": "member_left_channel",
        "channel": "G01FININT",
        "channel_type": "G",
        "user": "U02BOB",
        "event_ts": f"{time.time():.6f}",
    }
    assert slack_post(client, callback(left)).status_code == 200
    assert "slack:channel:G01FININT" not in user_group_keys(bob)
    joined = {
        **left,
        "type": "member_joined_channel",
        "user": "U01ALICE",
        "event_ts": f"{time.time() + 1:.6f}",
    }
    slack_post(client, callback(joined))
    assert "slack:channel:G01FININT" in user_group_keys(company.users["alice"])


# --- GitHub ----------------------------------------------------------------------------


@pytest.fixture
def github_source(company):
    identity_upsert(
        tenant=company.tenant, source_kind="github", handle="dave-acme", email="dave@acme.example"
    )
    return source_ensure(tenant=company.tenant, name="github", config={"repos": ["acme/apollo"]})


def github_post(client, event: str, body: dict, *, secret=GITHUB_SECRET, delivery="d-1"):
    raw = json.dumps(body).encode()
    signature = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return client.post(
        "/api/v1/connectors/github/webhook",
        raw,
        content_type="application/json",
        headers={"X-GitHub-Event": event, "X-Hub-Signature-256": signature, "X-GitHub-Delivery": delivery},
    )


REPO = {"full_name": "acme/apollo", "private": True}
ISSUE = {
    "number": 30,
    "title": "Huawei on-prem installer",
    "body": "华为需要离线安装包",
    "state": "closed",
    "created_at": "2026-11-20T10:00:00Z",
    "updated_at": "2026-11-25T10:00:00Z",
    "closed_at": "2026-11-25T10:00:00Z",
    "html_url": "https://github.com/acme/apollo/issues/30",
    "user": {"login": "dave-acme"},
    "labels": [{"name": "customer:华为"}],
}


def test_github_issue_closed_webhook(client, github_source):
    response = github_post(client, "issues", {"action": "closed", "issue": ISSUE, "repository": REPO})
    assert response.status_code == 200 and response.json()["accepted"] == 2
    closed = Event.objects.get(kind="issue_closed")
    assert closed.external_id == "acme/apollo#30" and closed.tags == {"customer": "华为"}


def test_github_bad_signature_is_refused(client, github_source):
    response = github_post(
        client, "issues", {"action": "opened", "issue": ISSUE, "repository": REPO}, secret="nope"
    )
    assert response.status_code == 401
    assert Event.objects.count() == 0
    unsigned = client.post(
        "/api/v1/connectors/github/webhook",
        b"{}",
        content_type="application/json",
        headers={"X-GitHub-Event": "issues"},
    )
    assert unsigned.status_code == 401


def test_github_replayed_delivery_changes_nothing(client, github_source):
    body = {"action": "closed", "issue": ISSUE, "repository": REPO}
    github_post(client, "issues", body)
    count = Event.objects.count()
    replay = github_post(client, "issues", body)
    assert replay.status_code == 200 and replay.json()["accepted"] == 0 and replay.json()["duplicates"] == 2
    assert Event.objects.count() == count


def test_github_member_removed_and_comment(client, github_source, company):
    added = {
        "action": "added",
        "member": {"login": "dave-acme"},
        "repository": REPO,
        "sender": {"login": "carol-acme"},
    }
    github_post(client, "member", added, delivery="d-2")
    assert "github:repo:acme/apollo" in user_group_keys(company.users["dave"])
    removed = {**added, "action": "removed"}
    github_post(client, "member", removed, delivery="d-3")
    assert "github:repo:acme/apollo" not in user_group_keys(company.users["dave"])
    comment = {
        "id": 5,
        "body": "installer ready",
        "user": {"login": "dave-acme"},
        "created_at": "2026-11-26T10:00:00Z",
        "updated_at": "2026-11-26T10:00:00Z",
    }
    github_post(
        client, "issue_comment", {"action": "created", "issue": ISSUE, "comment": comment, "repository": REPO}
    )
    github_post(
        client,
        "issue_comment",
        {"action": "deleted", "issue": ISSUE, "comment": comment, "repository": REPO},
        delivery="d-5",
    )
    kinds = list(
        Event.objects.filter(external_id="acme/apollo#30/comment/5")
        .order_by("version")
        .values_list("kind", flat=True)
    )
    assert kinds == ["message", "message_deleted"]


def test_github_deleting_an_issue_deletes_it_and_its_comments(client, github_source):
    opened = {**ISSUE, "state": "open", "closed_at": None}
    github_post(client, "issues", {"action": "opened", "issue": opened, "repository": REPO})
    comment = {"id": 6, "body": "installer 2.0 ready", "user": {"login": "dave-acme"},
               "created_at": "2026-11-26T10:00:00Z", "updated_at": "2026-11-26T10:00:00Z"}  # fmt: skip
    body = {"action": "created", "issue": opened, "comment": comment, "repository": REPO}
    github_post(client, "issue_comment", body, delivery="d-6")
    deleted = {"action": "deleted", "issue": opened, "repository": REPO}
    assert github_post(client, "issues", deleted, delivery="d-7").json()["accepted"] == 2
    gone = Event.objects.filter(kind="message_deleted").order_by("external_id")
    assert list(gone.values_list("external_id", "text")) == [
        ("acme/apollo#30", ""),
        ("acme/apollo#30/comment/6", ""),
    ]
    assert github_post(client, "issues", deleted, delivery="d-8").json()["duplicates"] == 2


def test_github_ping(client, github_source):
    assert github_post(client, "ping", {"zen": "Keep it logically awesome."}).json()["accepted"] == 0


def test_slack_unknown_workspace_is_refused(client, slack_source):
    body = {
        **callback(
            {"type": "message", "channel": "C01GENERAL", "user": "U01ALICE", "text": "x", "ts": "1.0"}
        ),
        "team_id": "T0OTHER",
    }
    assert slack_post(client, body).status_code == 404
    assert not Event.objects.filter(external_id="C01GENERAL/1.0").exists()


def test_github_unconfigured_repo_is_refused(client, github_source):
    other = {"action": "closed", "issue": ISSUE, "repository": {"full_name": "evil/repo", "private": True}}
    assert github_post(client, "issues", other).status_code == 404
    assert Event.objects.count() == 0


def test_webhooks_and_push_work_with_csrf_enforced(slack_source, connector_key):
    from django.test import Client

    from tests.connectors.conftest import make_event

    strict = Client(enforce_csrf_checks=True)
    assert slack_post(strict, {"type": "url_verification", "challenge": "c"}).status_code == 200
    pushed = strict.post(
        "/api/v1/connectors/events",
        make_event(source="crm", container={"key": "crm:account:1"}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {connector_key}"},
    )
    assert pushed.status_code == 202


def test_slack_non_ascii_digit_timestamp_is_refused(client, slack_source):
    response = client.post(
        "/api/v1/connectors/slack/events",
        "{}",
        content_type="application/json",
        headers={"X-Slack-Request-Timestamp": "²", "X-Slack-Signature": "v0=00"},
    )
    assert response.status_code == 401 and "Timestamp" in response.json()["detail"]


@pytest.mark.parametrize(
    "event",
    [
        {"type": "message", "channel": "C01GENERAL", "user": "U01ALICE", "text": "x", "ts": "abc"},
        {"type": "message", "channel": "C01GENERAL", "user": "U01ALICE", "text": "x", "ts": "1e400"},
        {"type": "message", "channel": "C01GENERAL", "user": "U01ALICE", "text": 5, "ts": "1793610000.1"},
        {"type": "message", "channel": ["C01GENERAL"], "user": "U01ALICE", "text": "x", "ts": "1793610000.1"},
        {"type": "message", "subtype": "message_deleted", "channel": "C01GENERAL", "ts": "1793610000.1"},
        {"type": "message", "subtype": "message_changed", "channel": "C01GENERAL", "message": "x"},
        {"type": "member_joined_channel", "channel": "C01GENERAL", "user": ["U01ALICE"]},
    ],
)
def test_signed_slack_events_of_the_wrong_shape_are_a_400(client, slack_source, event):
    before = Event.objects.count()
    response = slack_post(client, callback(event))
    assert response.status_code == 400 and "expected shape" in response.json()["detail"], response.content
    assert Event.objects.count() == before


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("pull_request", {"action": "opened", "repository": REPO, "pull_request": {"number": 2}}),
        ("issues", {"action": "opened", "repository": REPO, "issue": {**ISSUE, "created_at": "bad"}}),
        ("issues", {"action": "opened", "repository": REPO, "issue": "x"}),
        ("issue_comment", {"action": "created", "repository": REPO, "issue": {"number": 1}, "comment": "x"}),
        ("member", {"action": "added", "repository": REPO, "member": "x"}),
        ("issues", {"action": "opened", "repository": "x", "issue": ISSUE}),
        ("issues", {"action": "opened", "repository": {"full_name": ["acme/apollo"]}, "issue": ISSUE}),
    ],
)
def test_signed_github_events_of_the_wrong_shape_are_a_400(client, github_source, kind, body):
    before = Event.objects.count()
    response = github_post(client, kind, body)
    assert response.status_code in {400, 404}, response.content
    assert response.json()["detail"] and Event.objects.count() == before


@pytest.fixture
def bare_slack_source(company):
    """A Slack source with nothing stored yet."""
    return source_ensure(tenant=company.tenant, name="slack", config={"team_id": "T0ACME"})


# --- unsigned requests that crashed the signature checks -----------------------------------


def _slack_raw(client, body: bytes, *, timestamp: str | None = None, signature: str = "v0=00"):
    return client.post(
        "/api/v1/connectors/slack/events",
        body,
        content_type="application/json",
        headers={
            "X-Slack-Request-Timestamp": str(int(time.time())) if timestamp is None else timestamp,
            "X-Slack-Signature": signature,
        },
    )


def test_github_non_ascii_signature_is_a_401(client, github_source):
    response = client.post(
        "/api/v1/connectors/github/webhook",
        b"{}",
        content_type="application/json",
        headers={"X-Hub-Signature-256": "sha256=é", "X-GitHub-Event": "ping"},
    )
    assert response.status_code == 401 and "X-Hub-Signature-256" in response.json()["detail"]


def test_slack_non_ascii_signature_is_a_401(client, bare_slack_source):
    response = _slack_raw(client, b'{"type": "url_verification", "challenge": "x"}', signature="v0=é")
    assert response.status_code == 401 and "signature" in response.json()["detail"]


def test_slack_body_not_utf8_is_a_401(client, bare_slack_source):
    response = _slack_raw(client, b"\xff\xfe{not json")
    assert response.status_code == 401 and "signature" in response.json()["detail"]


def test_slack_timestamp_of_thousands_of_digits_is_a_401(client, bare_slack_source):
    response = _slack_raw(client, b"{}", timestamp="1" * 5000)
    assert response.status_code == 401 and "Timestamp" in response.json()["detail"]


def test_signed_slack_body_not_utf8_is_a_400(client, bare_slack_source):
    body, timestamp = b"\xff\xfe", str(int(time.time()))
    digest = hmac.new(SLACK_SECRET.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256)
    response = _slack_raw(client, body, timestamp=timestamp, signature="v0=" + digest.hexdigest())
    assert response.status_code in {400, 401} and response.json()["detail"]


# --- signed payloads with fields of the wrong type -----------------------------------------


@pytest.mark.parametrize("number", [None, "abc", {"n": 1}, True, -3, 1.5])
def test_github_issue_number_of_the_wrong_type_is_a_400(client, github_source, number):
    response = github_post(
        client, "issues", {"action": "opened", "issue": {**ISSUE, "number": number}, "repository": REPO}
    )
    assert response.status_code == 400 and "issue.number" in response.json()["detail"], response.content
    assert Event.objects.filter(source__name="github").count() == 0


def test_github_pull_request_and_comment_numbers_are_checked(client, github_source):
    pr = {**ISSUE, "number": "7"}
    response = github_post(
        client, "pull_request", {"action": "opened", "pull_request": pr, "repository": REPO}
    )
    assert response.status_code == 400 and "pull_request.number" in response.json()["detail"]
    comment = {"id": {"x": 1}, "body": "hi", "created_at": "2026-11-26T10:00:00Z"}
    body = {"action": "created", "issue": ISSUE, "comment": comment, "repository": REPO}
    response = github_post(client, "issue_comment", body)
    assert response.status_code == 400 and "comment.id" in response.json()["detail"]
    assert Event.objects.filter(source__name="github").count() == 0


def test_github_private_that_is_not_a_boolean_is_a_400(client, github_source):
    body = {"action": "opened", "issue": ISSUE, "repository": {**REPO, "private": None}}
    response = github_post(client, "issues", body)
    assert response.status_code == 400 and "repository.private" in response.json()["detail"]
    assert not Event.objects.filter(container_public=True).exists()


def _message(**over):
    return {"type": "message", "channel": "C01GENERAL", "user": "U01ALICE", "text": "x", **over}


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (_message(channel=12345, ts="1793610000.000100"), "event.channel"),
        (_message(channel="C01/../X", ts="1793610000.000100"), "event.channel"),
        (_message(ts=1793610000.1), "event.ts"),
        (_message(ts="1793610000.1", thread_ts=["x"]), "event.thread_ts"),
        (_message(subtype="message_deleted", deleted_ts={"a": 1}, ts="1793610000.1"), "event.deleted_ts"),
        (_message(subtype="message_deleted", deleted_ts=1793610000.1, ts="1793610000.1"), "event.deleted_ts"),
        (
            _message(subtype="message_changed", ts="1793610000.2", message={"ts": 1793610000.1, "text": "y"}),
            "event.message.ts",
        ),
        (
            _message(
                subtype="message_changed",
                ts="1793610000.2",
                message={"ts": "1793610000.1", "text": "y", "edited": {"ts": 5}},
            ),
            "event.message.edited.ts",
        ),
        ({"type": "member_joined_channel", "channel": "C01GENERAL", "user": 7}, "event.user"),
    ],
)
def test_signed_slack_fields_of_the_wrong_type_are_a_400(client, bare_slack_source, event, field):
    response = slack_post(client, callback(event))
    assert response.status_code == 400, response.content
    assert field in response.json()["detail"]
    assert Event.objects.filter(source__name="slack").count() == 0


def test_slack_events_of_other_types_are_still_ignored(client, bare_slack_source):
    # channel_created carries the channel as an object: not handled, not an error
    event = {"type": "channel_created", "channel": {"id": "C9", "name": "new"}}
    response = slack_post(client, callback(event))
    assert response.status_code == 200 and response.json()["accepted"] == 0
