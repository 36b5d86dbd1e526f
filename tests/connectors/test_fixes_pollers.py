"""Webhooks and pollers under bad input: a clear 4xx, never a 500; one bad item never
blocks a poller; secrets stay out of errors and logs; nothing is skipped or wrongly deleted."""

import hashlib
import hmac
import logging
import time
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.core.management import call_command

from almanac.services import agentkey_create
from connectors import conf, services
from connectors.importers import ingest_all
from connectors.importers import slack as sl
from connectors.models import Event, Source, SyncCursor
from connectors.pollers import poll_source
from tests.connectors.servers import Mailbox, http_server, imap_server
from tests.connectors.test_github_poller import GitHubApi, issue, second_issues_request_fails
from tests.connectors.test_imap_poller import imap_source, mail
from tests.connectors.test_slack_poller import NOW, SlackApi
from tests.connectors.test_webhooks import (
    GITHUB_SECRET,
    ISSUE,
    REPO,
    SLACK_SECRET,
    callback,
    github_post,
    slack_post,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _secrets(settings):
    from cryptography.fernet import Fernet

    settings.SLACK_SIGNING_SECRET = SLACK_SECRET
    settings.GITHUB_WEBHOOK_SECRET = GITHUB_SECRET
    settings.CONNECTOR_SECRET_KEY = Fernet.generate_key().decode()


@pytest.fixture
def slack_source(company):
    return services.source_ensure(tenant=company.tenant, name="slack", config={"team_id": "T0ACME"})


@pytest.fixture
def github_source(company):
    return services.source_ensure(tenant=company.tenant, name="github", config={"repos": ["acme/apollo"]})


# --- 1. Unsigned requests that crashed the signature checks ----------------------------


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


def test_slack_non_ascii_signature_is_a_401(client, slack_source):
    response = _slack_raw(client, b'{"type": "url_verification", "challenge": "x"}', signature="v0=é")
    assert response.status_code == 401 and "signature" in response.json()["detail"]


def test_slack_body_not_utf8_is_a_401(client, slack_source):
    response = _slack_raw(client, b"\xff\xfe{not json")
    assert response.status_code == 401 and "signature" in response.json()["detail"]


def test_slack_timestamp_of_thousands_of_digits_is_a_401(client, slack_source):
    response = _slack_raw(client, b"{}", timestamp="1" * 5000)
    assert response.status_code == 401 and "Timestamp" in response.json()["detail"]


def test_signed_slack_body_not_utf8_is_a_400(client, slack_source):
    body, timestamp = b"\xff\xfe", str(int(time.time()))
    digest = hmac.new(SLACK_SECRET.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256)
    response = _slack_raw(client, body, timestamp=timestamp, signature="v0=" + digest.hexdigest())
    assert response.status_code in {400, 401} and response.json()["detail"]


# --- 2. Signed payloads with fields of the wrong type ----------------------------------


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
def test_signed_slack_fields_of_the_wrong_type_are_a_400(client, slack_source, event, field):
    response = slack_post(client, callback(event))
    assert response.status_code == 400, response.content
    assert field in response.json()["detail"]
    assert Event.objects.filter(source__name="slack").count() == 0


def test_slack_events_of_other_types_are_still_ignored(client, slack_source):
    # channel_created carries the channel as an object: not handled, not an error
    event = {"type": "channel_created", "channel": {"id": "C9", "name": "new"}}
    response = slack_post(client, callback(event))
    assert response.status_code == 200 and response.json()["accepted"] == 0


# --- 3. IMAP: one malformed e-mail ------------------------------------------------------


def test_imap_malformed_message_is_rejected_and_the_rest_stored(company, monkeypatch, caplog):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "pw")
    box = Mailbox(
        {
            3: mail("m1@acme.example", "Apollo pricing", "Seats: 200."),
            5: mail("bad@acme.example", "Broken", "unparsable To", to="<a@[1.2.3.4>"),
            9: mail("m3@acme.example", "Zephyr kickoff", "Next week.", minute=9),
        }
    )
    with imap_server(box) as port:
        source = imap_source(company.tenant, port)
        result = poll_source(source=source)
        assert result["state"] == "ok" and result["rejected"] == 1
        state = SyncCursor.objects.get(source=source)
        assert state.cursor["last_uid"] == 9 and state.last_error == ""
        emails = Event.objects.filter(kind="email").values_list("external_id", flat=True)
        assert set(emails) == {"m1@acme.example", "m3@acme.example"}
        assert "UID 5" in caplog.text
        box.commands.clear()
        assert poll_source(source=source, force=True)["state"] == "ok"  # not read again
        assert not [c for c in box.commands if c.startswith("UID FETCH")]


# --- 4. Notes: one bad file -------------------------------------------------------------


@pytest.fixture
def notes_folder(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a-good.md").write_text("---\ntitle: Apollo sync\nattendees: [carol@acme.example]\n---\nok\n")
    (folder / "b-yaml.md").write_text("---\ntitle: [unclosed\n---\nbroken YAML\n")
    (folder / "c-attendees.md").write_text("---\ntitle: Five\nattendees: 5\n---\nwrong type\n")
    (folder / "d-public.md").write_text('---\ntitle: Leak\npublic: "false"\n---\nstring public\n')
    (folder / "e-good.md").write_text("---\ntitle: Zephyr sync\n---\nlater file\n")
    return folder


def test_notes_poller_skips_bad_files_and_counts_them(company, notes_folder, caplog):
    source = services.source_ensure(tenant=company.tenant, name="notes", config={"folder": str(notes_folder)})
    result = poll_source(source=source)
    assert result == {"accepted": 2, "duplicates": 0, "rejected": 3, "state": "ok"}
    assert set(Event.objects.values_list("title", flat=True)) == {"Apollo sync", "Zephyr sync"}
    for name in ("b-yaml.md", "c-attendees.md", "d-public.md"):
        assert name in caplog.text
    assert SyncCursor.objects.get(source=source).last_error == ""


def test_import_notes_skips_bad_files(company, notes_folder, capsys, caplog):
    call_command("import_notes", str(notes_folder), "--no-progress")
    assert "notes: 2 new events, 0 duplicates, 3 rejected" in capsys.readouterr().out
    assert "b-yaml.md" in caplog.text and "attendees must be" in caplog.text
    assert "public must be true or false" in caplog.text
    assert not Event.objects.filter(title="Leak").exists()


# --- 5. The calendar's secret URL -------------------------------------------------------


SECRET_PATH = "/calendar/ical/alice%40acme.example/private-5ecret7oken/basic.ics"


def _calendar_source(tenant, url):
    return services.source_ensure(tenant=tenant, name="calendar", config={"url": url})


def test_calendar_errors_and_logs_never_show_the_feed_url(company, client, caplog):
    caplog.set_level(logging.INFO)
    with http_server(lambda request: (404, {}, {"error": "gone"})) as server:
        host = server.url.removeprefix("http://")
        source = _calendar_source(company.tenant, f"http://user:pa55@{host}{SECRET_PATH}?key=5ecret")
        assert poll_source(source=source)["state"] == "backoff"
    assert SyncCursor.objects.get(source=source).last_error == f"calendar http://{host}: HTTP 404"
    key = agentkey_create(tenant=company.tenant, name="reader")[1]
    listing = client.get("/api/v1/connectors", headers={"Authorization": f"Bearer {key}"}).content.decode()
    assert "HTTP 404" in listing
    for secret in ("5ecret", "pa55", "basic.ics", "alice%40"):
        assert secret not in listing and secret not in caplog.text


def test_calendar_connection_error_does_not_show_the_url(company, caplog):
    with http_server(lambda request: (200, {}, b"")) as server:
        url = f"{server.url}{SECRET_PATH}"
    # the server is gone: connection refused
    source = _calendar_source(company.tenant, url)
    assert poll_source(source=source)["state"] == "backoff"
    error = SyncCursor.objects.get(source=source).last_error
    assert error.startswith("calendar http://127.0.0.1:") and "5ecret" not in error
    assert "5ecret" not in caplog.text


def test_calendar_invalid_feed_error_does_not_quote_it(company):
    with http_server(
        lambda request: (200, {}, b"BEGIN:VCALENDAR\r\nSUMMARY private merger talk\r\n")
    ) as server:
        source = _calendar_source(company.tenant, server.url + SECRET_PATH)
        assert poll_source(source=source)["state"] == "backoff"
    error = SyncCursor.objects.get(source=source).last_error
    assert "not a valid ICS feed" in error and "merger" not in error and "5ecret" not in error


# --- 6. GitHub: an item updated between two pages ----------------------------------------


class MovingGitHubApi(GitHubApi):
    """After the first page of issues is served, issue 1 is updated: it moves to the end."""

    def __init__(self):
        super().__init__()
        self.moved = False

    def __call__(self, request):
        response = super().__call__(request)
        if request["path"] == "/repos/acme/apollo/issues" and not self.moved:
            self.moved = True
            self.issues[0] = {**self.issues[0], "updated_at": "2026-11-20T10:00:00Z", "title": "moved"}
        return response


@pytest.fixture
def moving_api(company):
    api = MovingGitHubApi()
    with http_server(api) as server:
        api.base = server.url
        api.issues = [
            issue(server.url, 1),
            issue(server.url, 2, updated="2026-11-11T10:00:00Z"),
            issue(server.url, 3, updated="2026-11-12T10:00:00Z"),
        ]
        server.api = api
        yield server


def _github_source(tenant, server, per_page=2):
    source = services.source_ensure(
        tenant=tenant,
        name="github",
        config={
            "repos": ["acme/apollo"],
            "base_url": server.url,
            "per_page": per_page,
            "seconds_between_requests": 0,
        },
    )
    services.source_set_credentials(source=source, value="ghp_test")
    return source


def test_github_issue_updated_between_pages_skips_nothing(company, moving_api):
    source = _github_source(company.tenant, moving_api)
    assert poll_source(source=source)["state"] == "ok"
    numbers = {e.split("#")[1] for e in Event.objects.values_list("external_id", flat=True)}
    assert numbers == {"1", "2", "3"}
    assert Event.objects.filter(external_id="acme/apollo#1", title="moved").exists()
    pages = [r["params"].get("page") for r in moving_api.requests if r["path"].endswith("/issues")]
    assert set(pages) == {None}  # always page 1, from the last updated_at read
    cursor = SyncCursor.objects.get(source=source).cursor["repos"]["acme/apollo"]
    assert cursor["issues_since"] == "2026-11-20T10:00:00+00:00"


def test_github_more_issues_at_one_updated_at_than_a_page_ends(company, moving_api):
    api = moving_api.api
    api.moved = True  # nothing moves
    same = "2026-11-15T10:00:00Z"
    api.issues = [issue(moving_api.url, n, updated=same) for n in range(1, 6)]
    source = _github_source(company.tenant, moving_api)
    assert poll_source(source=source)["state"] == "ok"
    assert Event.objects.filter(kind="issue").values("external_id").distinct().count() == 5
    assert len([r for r in moving_api.requests if r["path"].endswith("/issues")]) < 10


def test_github_5xx_mid_way_resumes_from_the_saved_mark(company, moving_api):
    api = moving_api.api
    api.moved = True
    moving_api.app = second_issues_request_fails(api.__call__)
    source = _github_source(company.tenant, moving_api)
    assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert state.cursor["repos"]["acme/apollo"]["issues_since"] == "2026-11-11T10:00:00+00:00"
    moving_api.requests.clear()
    assert poll_source(source=source, force=True)["state"] == "ok"
    assert moving_api.requests[2]["params"]["since"] == "2026-11-11T10:00:00Z"
    assert Event.objects.filter(external_id="acme/apollo#3").exists()


# --- 7. Slack: the first poll after an export import ------------------------------------


def test_slack_first_poll_after_import_deletes_nothing(company, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    api = SlackApi()
    old = f"{NOW - 200 * 86400:.6f}"  # imported from the export; the API no longer returns it
    channel = sl.SlackChannel(id="C1", name="general", public=True)
    message = {"type": "message", "user": "U1", "text": "from the export", "ts": old}
    ingest_all(
        tenant=company.tenant,
        payloads=sl.message_payloads(source_name="slack", channel=channel, message=message),
    )
    with http_server(api) as server:
        source = services.source_ensure(
            tenant=company.tenant, name="slack", config={"base_url": server.url + "/api/", "reread_hours": 24}
        )
        source.credentials = "env:TEST_SLACK_TOKEN"
        source.save(update_fields=["credentials"])
        assert poll_source(source=source)["state"] == "ok"
        assert poll_source(source=source)["state"] == "ok"
    assert not Event.objects.filter(kind="message_deleted").exists()


# --- 8. Calendar: recurring events while the feed is unchanged --------------------------


WEEKLY = b"""BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Acme//test//EN\r
BEGIN:VEVENT\r
UID:weekly-sync@acme.example\r
DTSTAMP:20260101T000000Z\r
DTSTART:20260105T090000Z\r
DTEND:20260105T093000Z\r
RRULE:FREQ=WEEKLY\r
SUMMARY:Weekly Apollo sync\r
ORGANIZER:mailto:alice@acme.example\r
END:VEVENT\r
END:VCALENDAR\r
"""


def _etag_feed(request):
    if request["headers"].get("If-None-Match") == '"w1"':
        return 304, {}, b""
    return 200, {"ETag": '"w1"', "Content-Type": "text/calendar"}, WEEKLY


def test_recurring_events_keep_arriving_while_the_feed_is_unchanged(company):
    start = datetime(2026, 6, 1, tzinfo=UTC)
    with http_server(_etag_feed) as server:
        source = _calendar_source(company.tenant, server.url + "/team.ics")
        with mock.patch("django.utils.timezone.now", return_value=start):
            first = poll_source(source=source)["accepted"]
        with mock.patch("django.utils.timezone.now", return_value=start + timedelta(hours=2)):
            assert poll_source(source=source, force=True)["accepted"] == 0
        assert server.requests[-1]["headers"].get("If-None-Match") == '"w1"'  # the cheap 304 path
        with mock.patch("django.utils.timezone.now", return_value=start + timedelta(days=8)):
            later = poll_source(source=source, force=True)
        assert "If-None-Match" not in server.requests[-1]["headers"]
    assert first > 10 and later["state"] == "ok" and later["accepted"] >= 1
    newest = Event.objects.filter(external_id__startswith="weekly-sync").order_by("-occurred_at").first()
    assert newest.occurred_at > start + timedelta(days=60)


# --- 9. Retry-After that is no number of seconds -----------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-5", "soon"])
def test_unusable_retry_after_backs_off_exponentially(company, value):
    with http_server(lambda request: (429, {"Retry-After": value}, {"error": "slow down"})) as server:
        source = _calendar_source(company.tenant, server.url + "/team.ics")
        assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    delay = (state.backoff_until - state.last_attempt_at).total_seconds()
    assert state.consecutive_failures == 1 and abs(delay - conf.BACKOFF_BASE_SECONDS) < 5


def test_huge_retry_after_is_capped(company):
    with http_server(lambda request: (429, {"Retry-After": "1e300"}, {"error": "slow down"})) as server:
        source = _calendar_source(company.tenant, server.url + "/team.ics")
        assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert abs((state.backoff_until - state.last_attempt_at).total_seconds() - conf.BACKOFF_MAX_SECONDS) < 5


def test_retry_after_as_an_http_date(company):
    when = datetime.now(UTC) + timedelta(seconds=300)
    header = when.strftime("%a, %d %b %Y %H:%M:%S GMT")
    with http_server(lambda request: (429, {"Retry-After": header}, {"error": "slow down"})) as server:
        source = _calendar_source(company.tenant, server.url + "/team.ics")
        assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert 290 <= (state.backoff_until - state.last_attempt_at).total_seconds() <= 310


def test_credentials_naming_an_unset_environment_variable_fail_the_poll(company, monkeypatch):
    monkeypatch.delenv("ALMANAC_TEST_CAL_TOKEN", raising=False)
    requests = []
    with http_server(lambda request: requests.append(request) or (200, {}, b"")) as server:
        source = _calendar_source(company.tenant, server.url + "/basic.ics")
        Source.objects.filter(pk=source.pk).update(credentials="env:ALMANAC_TEST_CAL_TOKEN")
        source.refresh_from_db()
        assert poll_source(source=source)["state"] == "backoff"
    assert "ALMANAC_TEST_CAL_TOKEN, which is not set" in SyncCursor.objects.get(source=source).last_error
    assert requests == []  # never polled without the credentials it was given
