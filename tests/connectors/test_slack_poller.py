import time

import pytest
from django.utils import timezone

from almanac.selectors import group_members
from connectors.models import Event, SyncCursor
from connectors.services.importer import ingest_all
from connectors.services.poller import poll_source
from connectors.services.sources import source_ensure, source_reset_backoff
from connectors.slack import normalize as sl
from tests.connectors.servers import http_server

pytestmark = pytest.mark.django_db

NOW = time.time()


def ts(hours_ago: float) -> str:
    return f"{NOW - hours_ago * 3600:.6f}"


class SlackApi:
    """Enough of the Slack Web API: users.list, conversations.list/members/history/replies."""

    def __init__(self):
        self.parent = ts(5)
        self.users = [
            {"id": "U1", "name": "alice", "profile": {"real_name": "Alice", "email": "alice@acme.example"}},
            {"id": "U2", "name": "bob", "profile": {"real_name": "Bob", "email": "bob@acme.example"}},
            {
                "id": "U3",
                "name": "wangwei",
                "profile": {"real_name": "王伟", "email": "wangwei@acme.example"},
            },
        ]
        self.channels = [
            {"id": "C1", "name": "general", "is_private": False},
            {"id": "G1", "name": "finance-internal", "is_private": True},
        ]
        self.members = {"C1": ["U1", "U2", "U3"], "G1": ["U2", "U3"]}
        self.history = {
            "C1": [
                [
                    {"type": "message", "user": "U1", "text": "Vercel signed for Apollo", "ts": ts(2)},
                    {
                        "type": "message",
                        "user": "U3",
                        "text": "Zephyr 启动",
                        "ts": self.parent,
                        "thread_ts": self.parent,
                        "reply_count": 1,
                        "latest_reply": ts(4),
                    },
                ],
                [{"type": "message", "user": "U2", "text": "oldest message", "ts": ts(10)}],
            ],
            "G1": [[{"type": "message", "user": "U2", "text": "margin 62% — finance only", "ts": ts(3)}]],
        }
        self.replies = {
            self.parent: [
                {"type": "message", "user": "U2", "text": "好的", "ts": ts(4), "thread_ts": self.parent}
            ]
        }
        self.rate_limit_next = set()  # methods that answer 429 once

    def __call__(self, request):
        method = request["path"].rsplit("/", 1)[-1]
        params = request["params"]
        if request["headers"].get("Authorization") != "Bearer xoxb-test":
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        if method in self.rate_limit_next:
            self.rate_limit_next.discard(method)
            return 429, {"Retry-After": "30"}, {"ok": False, "error": "ratelimited"}
        page = int(params.get("cursor") or 0)
        if method == "users.list":
            return self._paged("members", [self.users[:2], self.users[2:]], page)
        if method == "conversations.list":
            return self._paged("channels", [self.channels], page)
        if method == "conversations.members":
            return self._paged("members", [self.members.get(params["channel"], [])], page)
        if method == "conversations.history":
            if params["channel"] not in self.history:
                return 200, {}, {"ok": False, "error": "not_in_channel"}
            pages = self.history[params["channel"]]
            oldest = float(params.get("oldest") or 0)
            pages = [[m for m in p if float(m["ts"]) > oldest] for p in pages]
            return self._paged("messages", pages, page)
        if method == "conversations.replies":
            parent = next(m for p in self.history["C1"] for m in p if m["ts"] == params["ts"])
            return self._paged("messages", [[parent, *self.replies[params["ts"]]]], page)
        return 200, {}, {"ok": False, "error": "unknown_method"}

    @staticmethod
    def _paged(key, pages, page):
        nxt = str(page + 1) if page + 1 < len(pages) else ""
        return 200, {}, {"ok": True, key: pages[page], "response_metadata": {"next_cursor": nxt}}


def _source(tenant, server):
    source = source_ensure(
        tenant=tenant, name="slack", config={"base_url": server.url + "/api/", "reread_hours": 24}
    )
    source.credentials = "env:TEST_SLACK_TOKEN"
    source.save(update_fields=["credentials"])
    return source


def test_slack_poll_reads_channels_threads_members(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    source = _source(company.tenant, slack_api)
    result = poll_source(source=source)
    assert result == {"accepted": 5, "duplicates": 1, "state": "ok"}  # the thread parent comes twice
    texts = set(Event.objects.values_list("text", flat=True))
    assert texts == {
        "Vercel signed for Apollo",
        "Zephyr 启动",
        "好的",
        "oldest message",
        "margin 62% — finance only",
    }
    reply = Event.objects.get(text="好的")
    assert reply.thread_key == f"slack:thread:C1/{slack_api.api.parent}"
    assert group_members(tenant=company.tenant, key="slack:channel:G1") == ["bob", "wangwei"]
    assert Event.objects.get(text__startswith="margin").container_public is False
    assert SyncCursor.objects.get(source=source).cursor["channels"]["C1"]["latest_ts"] == ts(2)


def test_slack_429_backs_off_and_resumes_from_saved_page(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    source = _source(company.tenant, slack_api)
    original = slack_api.api.__call__

    calls = {"n": 0}

    def limited(request):  # the second history page of C1 is rate limited once
        if request["path"].endswith("conversations.history") and request["params"].get("cursor") == "1":
            calls["n"] += 1
            if calls["n"] == 1:
                return 429, {"Retry-After": "30"}, {"ok": False, "error": "ratelimited"}
        return original(request)

    slack_api.app = limited
    before = timezone.now()
    assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert state.consecutive_failures == 1 and "429" in state.last_error
    assert before.timestamp() + 29 <= state.backoff_until.timestamp() <= timezone.now().timestamp() + 31
    assert state.cursor["channels"]["C1"]["page"] == "1"  # page 1 is stored, page 2 is next
    assert Event.objects.filter(text="Vercel signed for Apollo").exists()
    assert poll_source(source=source)["state"] == "backoff"  # still backing off: nothing is called
    source_reset_backoff(source=source)
    slack_api.requests.clear()
    result = poll_source(source=source)
    assert result["state"] == "ok"
    history = [r["params"] for r in slack_api.requests if r["path"].endswith("conversations.history")]
    assert history[0]["cursor"] == "1"  # resumed where it stopped
    assert Event.objects.filter(text="oldest message").count() == 1
    assert Event.objects.count() == 5
    assert SyncCursor.objects.get(source=source).consecutive_failures == 0


def test_slack_reread_window_catches_late_thread_reply(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    source = _source(company.tenant, slack_api)
    poll_source(source=source)
    api = slack_api.api
    source.config["reread_hours"] = 2.5  # history re-reads from 4.5 h ago: the parent (5 h) is not in it
    source.save(update_fields=["config"])
    # ... but its thread was active within the window (reply 4 h ago), and gets a late reply.
    api.replies[api.parent].append(
        {
            "type": "message",
            "user": "U1",
            "text": "late reply 迟到的回复",
            "ts": ts(0.5),
            "thread_ts": api.parent,
        }
    )
    slack_api.requests.clear()
    result = poll_source(source=source)
    assert result["accepted"] == 1
    assert Event.objects.get(text="late reply 迟到的回复").thread_key.endswith(api.parent)
    oldest = [
        r["params"]["oldest"] for r in slack_api.requests if r["path"].endswith("conversations.history")
    ]
    assert float(oldest[0]) == pytest.approx(float(ts(2)) - 2.5 * 3600, abs=1)
    assert float(oldest[0]) > float(api.parent)
    assert any(r["path"].endswith("conversations.replies") for r in slack_api.requests)


def test_slack_bad_token_is_an_error_state(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-wrong")
    source = _source(company.tenant, slack_api)
    assert poll_source(source=source)["state"] == "backoff"
    assert "invalid_auth" in SyncCursor.objects.get(source=source).last_error
    assert Event.objects.count() == 0


def test_slack_channels_the_bot_cannot_read_are_skipped(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    # ahead of the readable channels: the poll must go on past them
    slack_api.api.channels[:0] = [
        {"id": "C9", "name": "kicked-out", "is_private": False},  # history answers not_in_channel
        {"id": "C8", "name": "not-joined", "is_private": False, "is_member": False},
    ]
    source = _source(company.tenant, slack_api)
    assert poll_source(source=source)["state"] == "ok"
    assert Event.objects.filter(container_key="slack:channel:G1").exists()
    assert not any(r["params"].get("channel") == "C8" for r in slack_api.requests)


def _remove(api, text: str) -> str:
    for pages in api.history.values():
        for page in pages:
            for message in list(page):
                if message["text"] == text:
                    page.remove(message)
                    return message["ts"]
    raise AssertionError(text)


def test_slack_poll_notices_a_deleted_message(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    source = _source(company.tenant, slack_api)
    poll_source(source=source)
    gone = _remove(slack_api.api, "oldest message")  # older than the newest message of its window
    result = poll_source(source=source)
    assert result["accepted"] == 1
    deletion = Event.objects.get(kind="message_deleted")
    assert deletion.external_id == f"C1/{gone}" and deletion.raw == {"detected": "poll"}
    assert poll_source(source=source)["accepted"] == 0  # noticed once
    # Replies are not in conversations.history: a reply is never taken for deleted.
    assert not Event.objects.filter(kind="message_deleted", text="好的").exists()


def test_slack_poll_deletes_a_thread_parent_that_became_a_tombstone(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    source = _source(company.tenant, slack_api)
    poll_source(source=source)
    for pages in slack_api.api.history.values():
        for page in pages:
            for message in page:
                if message["text"] == "oldest message":
                    message.update(subtype="tombstone", text="This message was deleted.", user="USLACKBOT")
                    gone = message["ts"]
    assert poll_source(source=source)["accepted"] == 1
    deletion = Event.objects.get(kind="message_deleted")
    assert deletion.external_id == f"C1/{gone}"
    assert not Event.objects.filter(text="This message was deleted.").exists()
    assert poll_source(source=source)["accepted"] == 0  # the stub read again is a duplicate


def test_slack_deletion_check_can_be_turned_off(company, slack_api, monkeypatch):
    monkeypatch.setenv("TEST_SLACK_TOKEN", "xoxb-test")
    source = _source(company.tenant, slack_api)
    poll_source(source=source)
    _remove(slack_api.api, "oldest message")
    source.config["detect_deletions"] = False
    source.save(update_fields=["config"])
    poll_source(source=source)
    assert not Event.objects.filter(kind="message_deleted").exists()


# --- the first poll after an export import -------------------------------------------------


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
        source = source_ensure(
            tenant=company.tenant, name="slack", config={"base_url": server.url + "/api/", "reread_hours": 24}
        )
        source.credentials = "env:TEST_SLACK_TOKEN"
        source.save(update_fields=["credentials"])
        assert poll_source(source=source)["state"] == "ok"
        assert poll_source(source=source)["state"] == "ok"
    assert not Event.objects.filter(kind="message_deleted").exists()
