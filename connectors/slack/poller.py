"""Slack Web API poller (slack_sdk.WebClient; `base_url` configurable).

Config: {"base_url"?: str, "channels"?: [id or name], "reread_hours"?: int, "team_id"?: str}.
Credentials: the bot token (xoxb-...). Cursor per channel: the newest ts read, the page cursor
and oldest bound of an unfinished read, and recent threads. Every poll re-reads the last
`reread_hours` (default SLACK_REREAD_HOURS) of history, and the replies of threads active in
that window, so late replies and edits are caught; duplicates are dropped by ingest.

Deletions: the Web API does not list deleted messages, so a poll that read its whole
re-read window in one go (not a channel's first read, which goes back as far as the API
keeps history) compares it with what the source holds: a top-level message posted in
the window, older than the newest message the read returned, that the read no longer
returned was deleted (a `message_deleted` event, as the Events API would have sent).
Replies are not checked (history does not return them), nor the newest messages of a
window (nothing returned after them proves them gone). Config `detect_deletions: false`
turns this off.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from connectors.services.poller import PollError, http_error, secret
from connectors.slack.normalize import (
    SlackChannel,
    deleted_payload,
    member_handles,
    message_payloads,
    user_from_api,
    users_record,
)

DEFAULT_BASE_URL = "https://slack.com/api/"
# Errors about one channel that must not stop the others (the bot was removed, or it was deleted).
SKIPPABLE = ("not_in_channel", "channel_not_found")
log = logging.getLogger(__name__)


def _call(client: WebClient, method: str, **params) -> dict:
    try:
        return client.api_call(
            method, http_verb="GET", params={k: v for k, v in params.items() if v not in (None, "")}
        ).data
    except SlackApiError as exc:
        response = exc.response
        raise http_error(
            what=f"slack {method}",
            status=response.status_code,
            headers=response.headers,
            detail=str(response.get("error", "")),
        ) from exc


def _pages(client: WebClient, method: str, key: str, **params):
    cursor = None
    while True:
        data = _call(client, method, cursor=cursor, limit=200, **params)
        yield from data.get(key) or []
        cursor = (data.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            return


def _channels(client: WebClient, source, users) -> list[SlackChannel]:
    wanted = set(source.config.get("channels") or [])
    channels = []
    for data in _pages(
        client,
        "conversations.list",
        "channels",
        types="public_channel,private_channel",
        exclude_archived="true",
    ):
        if wanted and data["id"] not in wanted and data.get("name") not in wanted:
            continue
        if data.get("is_member") is False:
            continue  # the bot cannot read it; invite the app to the channel to include it
        members = list(_pages(client, "conversations.members", "members", channel=data["id"]))
        channels.append(
            SlackChannel(
                id=data["id"],
                name=data.get("name", ""),
                public=not data.get("is_private", False),
                members=member_handles(members, users),
                users=users,
                workspace_url=str(source.config.get("workspace_url") or ""),
            )
        )
    return channels


def _thread_payloads(client, source, channel, thread_ts: str) -> tuple[list[dict], float]:
    payloads, last = [], float(thread_ts)
    for message in _pages(client, "conversations.replies", "messages", channel=channel.id, ts=thread_ts):
        payloads.extend(message_payloads(source_name=source.name, channel=channel, message=message))
        last = max(last, float(message.get("ts", 0)))
    return payloads, last


def _poll_channel(client, source, channel: SlackChannel, cursor: dict, save) -> None:
    state = dict(cursor["channels"].get(channel.id) or {})
    window = float(source.config.get("reread_hours", settings.SLACK_REREAD_HOURS)) * 3600
    latest = float(state.get("latest_ts") or 0)
    oldest = (
        state.get("oldest") if state.get("page") else (f"{max(latest - window, 0):.6f}" if latest else "0")
    )
    threads = dict(state.get("threads") or {})
    page, max_ts = state.get("page"), float(state.get("max_ts") or latest)
    fresh = set(state.get("fresh") or [])  # threads seen in this read: their replies are always read
    whole_read = page is None  # not resumed: this poll sees the whole window (deletion check)
    returned: set[str] = set()
    while True:
        data = _call(
            client, "conversations.history", channel=channel.id, oldest=oldest, cursor=page, limit=200
        )
        payloads = []
        for message in data.get("messages") or []:
            payloads.extend(message_payloads(source_name=source.name, channel=channel, message=message))
            max_ts = max(max_ts, float(message.get("ts", 0)))
            if "ts" in message:
                returned.add(message["ts"])
            if message.get("reply_count") and message.get("thread_ts") == message.get("ts"):
                threads[message["ts"]] = float(message.get("latest_reply") or message["ts"])
                fresh.add(message["ts"])
        page = (data.get("response_metadata") or {}).get("next_cursor") or None
        cursor["channels"][channel.id] = {
            **state,
            "oldest": oldest,
            "page": page,
            "max_ts": max_ts,
            "threads": threads,
            "fresh": sorted(fresh),
        }
        save(payloads, cursor)
        if not page:
            break
    # Only a read of the re-read window, never a channel's first read (oldest "0"): that
    # returns what the API still holds (90 days on a free plan), and messages imported from
    # an export that are older than that were not deleted.
    if whole_read and latest and returned and source.config.get("detect_deletions", True):
        save(_vanished(source, channel, after=float(oldest), returned=returned), cursor)
    _reread_threads(client, source, channel, cursor, threads, fresh, max_ts - window, save)
    cursor["channels"][channel.id] = {
        "latest_ts": f"{max_ts:.6f}",
        "threads": cursor["channels"][channel.id]["threads"],
    }
    save([], cursor)


def _vanished(source, channel: SlackChannel, *, after: float, returned: set[str]) -> list[dict]:
    """`message_deleted` for held top-level messages of the window the read no longer returned."""
    from connectors.selectors import slack_present_messages

    newest = max(float(ts) for ts in returned)
    # A second of margin at the window's start: `oldest` is exclusive and ts → time rounds.
    held = slack_present_messages(source=source, channel_id=channel.id, after=after + 1, upto=newest)
    now = f"{time.time():.6f}"
    return [
        deleted_payload(
            source_name=source.name, channel=channel, deleted_ts=ts, event_ts=now, raw={"detected": "poll"}
        )
        for ts in sorted(held - returned)
    ]


def _reread_threads(client, source, channel, cursor, threads: dict, fresh: set, horizon: float, save) -> None:
    """Read the replies of threads seen in this read, and of threads active within the window
    (replies newer than `horizon`, the channel's newest message minus the window)."""
    for thread_ts, last in sorted(threads.items()):
        if thread_ts in fresh or last >= horizon:
            payloads, last = _thread_payloads(client, source, channel, thread_ts)
        else:
            payloads = []
        if last >= horizon:
            threads[thread_ts] = last
        else:
            threads.pop(thread_ts)
        fresh.discard(thread_ts)
        cursor["channels"][channel.id].update(threads=dict(threads), fresh=sorted(fresh))
        save(payloads, cursor)


def poll(*, source, cursor: dict, save) -> None:
    token = secret(source)
    if not token:
        raise PollError("slack: no bot token in the source's credentials")
    client = WebClient(token=token, base_url=source.config.get("base_url") or DEFAULT_BASE_URL, timeout=30)
    users = {u["id"]: user_from_api(u) for u in _pages(client, "users.list", "members")}
    users_record(tenant=source.tenant, users=users)
    cursor.setdefault("channels", {})
    for channel in _channels(client, source, users):
        try:
            _poll_channel(client, source, channel, cursor, save)
        except PollError as exc:
            if not any(code in str(exc) for code in SKIPPABLE):
                raise
            log.warning("slack: skipping %s (%s)", channel.id, exc)
