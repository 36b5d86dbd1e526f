"""Slack: normalization of messages, channels and people, shared by the export importer,
the poller and the Events API webhook."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from almanac.models import Tenant
from connectors.schemas import MAX_VERSION, link_or_empty
from connectors.services.identity import identity_upsert_many
from connectors.services.normalize import from_ts, iso

# System messages that are not content; membership comes from the channel member lists.
SKIP_SUBTYPES = {
    "channel_join",
    "channel_leave",
    "group_join",
    "group_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "channel_archive",
    "channel_unarchive",
    "group_topic",
    "group_purpose",
    "group_name",
    "group_archive",
    "group_unarchive",
    "pinned_item",
    "unpinned_item",
    "message_replied",  # a parent's reply counter changed: not new content
}
MENTION_RE = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
LINK_RE = re.compile(r"<(https?://[^|>]+)\|([^>]+)>")
CHANNEL_RE = re.compile(r"<#C[A-Z0-9]+\|([^>]+)>")


@dataclass
class SlackUser:
    id: str
    name: str = ""
    email: str = ""
    bot: bool = False  # a bot or an app: its handle is its id, so it is never taken for a person

    @property
    def handle(self) -> str:
        return self.id if self.bot else self.email or self.id


@dataclass
class SlackChannel:
    id: str
    name: str
    public: bool
    members: list[str] | None = None  # handles (e-mail when known, else the Slack user id)
    users: dict[str, SlackUser] = field(default_factory=dict)
    # "https://acme.slack.com": the source's `config.workspace_url`, for message permalinks
    workspace_url: str = ""

    @property
    def key(self) -> str:
        return f"slack:channel:{self.id}"


def user_from_api(data: dict) -> SlackUser:
    profile = data.get("profile") or {}
    name = (
        profile.get("real_name")
        or data.get("real_name")
        or profile.get("display_name")
        or data.get("name", "")
    )
    bot = bool(data.get("is_bot") or data.get("is_app_user")) or data["id"] == "USLACKBOT"
    return SlackUser(id=data["id"], name=name, email=(profile.get("email") or "").lower(), bot=bot)


def users_record(*, tenant: Tenant, users: dict[str, SlackUser]) -> None:
    people = [(u.id, u.name, "" if u.bot else u.email) for u in users.values()]
    identity_upsert_many(tenant=tenant, source_kind="slack", people=people)


def member_handles(ids: list[str], users: dict[str, SlackUser]) -> list[str]:
    return [users[i].handle if i in users else i for i in ids]


def render_text(text: str, users: dict[str, SlackUser]) -> str:
    text = MENTION_RE.sub(
        lambda m: "@" + (users[m.group(1)].name if m.group(1) in users else m.group(1)), text or ""
    )
    text = LINK_RE.sub(lambda m: f"{m.group(2)} ({m.group(1)})", text)
    text = CHANNEL_RE.sub(lambda m: "#" + m.group(1), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _author(message: dict, users: dict[str, SlackUser]) -> str:
    user_id = message.get("user") or ""
    if user_id in users:
        return users[user_id].handle
    return user_id or message.get("username") or message.get("bot_id") or ""


def _content(message: dict, users: dict[str, SlackUser]) -> str:
    text = render_text(message.get("text", ""), users)
    files = [f.get("name") or f.get("title") for f in message.get("files") or [] if isinstance(f, dict)]
    if files:
        text = f"{text}\n[files: {', '.join(n for n in files if n)}]".strip()
    return text


def _base(*, source_name: str, channel: SlackChannel, ts: str, thread_ts: str, with_members: bool) -> dict:
    container = {
        "key": channel.key,
        "name": f"#{channel.name}" if channel.name else "",
        "public": channel.public,
    }
    if with_members and channel.members is not None:
        container["members"] = channel.members
    return {
        "source": source_name,
        "external_id": f"{channel.id}/{ts}",
        "container": container,
        "thread_key": f"slack:thread:{channel.id}/{thread_ts}",
    }


def permalink(*, workspace_url: str, channel_id: str, ts: str, thread_ts: str = "") -> str:
    """A message's Slack permalink (the shape `chat.getPermalink` answers), "" without the
    workspace's URL: `<workspace>/archives/<channel>/p<ts without the dot>`, and for a
    reply `?thread_ts=<parent>&cid=<channel>`."""
    base = link_or_empty(workspace_url).rstrip("/")
    if not base or not ts:
        return ""
    link = f"{base}/archives/{channel_id}/p{ts.replace('.', '')}"
    if thread_ts and thread_ts != ts:
        link += f"?thread_ts={thread_ts}&cid={channel_id}"
    return link_or_empty(link)


def message_payloads(
    *, source_name: str, channel: SlackChannel, message: dict, with_members: bool = True
) -> list[dict]:
    """A Slack message as events: `message` (version 1) and, when it was edited,
    `message_changed` at version int(edited.ts) so a later poll/webhook of the same edit
    is a duplicate. System subtypes (joins, topics) yield nothing.

    Newest first: version 1 re-read carries the edited text, and ingest tells that from a
    second edit within one second (a new version) by the newer version stored before it."""
    if (
        message.get("type", "message") != "message"
        or message.get("subtype") in SKIP_SUBTYPES
        or "ts" not in message
    ):
        return []
    ts = message["ts"]
    if message.get("subtype") == "tombstone":
        # A deleted thread parent: Slack keeps a "This message was deleted." stub for its
        # replies (history, polls and a `message_changed` webhook carry it), never the text.
        return [tombstone_payload(source_name=source_name, channel=channel, message=message)]
    base = _base(
        source_name=source_name,
        channel=channel,
        ts=ts,
        thread_ts=message.get("thread_ts") or ts,
        with_members=with_members,
    )
    body = {
        "author": _author(message, channel.users),
        "text": _content(message, channel.users),
        "raw": message,
    }
    link = permalink(
        workspace_url=channel.workspace_url,
        channel_id=channel.id,
        ts=ts,
        thread_ts=message.get("thread_ts") or "",
    )
    if link:
        body["url"] = link
    events = [{**base, **body, "version": 1, "kind": "message", "occurred_at": iso(from_ts(ts))}]
    edited = message.get("edited") or {}
    if edited.get("ts"):
        events.insert(
            0,
            {
                **base,
                **body,
                "version": max(int(float(edited["ts"])), 2),
                "kind": "message_changed",
                "occurred_at": iso(from_ts(edited["ts"])),
            },
        )
    return events


def deleted_payload(
    *, source_name: str, channel: SlackChannel, deleted_ts: str, event_ts: str, raw: dict
) -> dict:
    base = _base(
        source_name=source_name, channel=channel, ts=deleted_ts, thread_ts=deleted_ts, with_members=False
    )
    base["thread_key"] = ""
    # +1: a deletion in the same second as an edit must still be a new version.
    return {
        **base,
        "version": int(float(event_ts)) + 1,
        "kind": "message_deleted",
        "occurred_at": iso(from_ts(event_ts)),
        "raw": raw,
    }


def tombstone_payload(*, source_name: str, channel: SlackChannel, message: dict) -> dict:
    """The deletion a tombstone stands for, at the highest version: it is final, and every
    later read of the same stub is a duplicate. Its time is the edit that made the stub when
    Slack says, else now: later than any edit, so the deletion is the item's state."""
    stamp = (message.get("edited") or {}).get("ts") or str(time.time())
    payload = deleted_payload(
        source_name=source_name, channel=channel, deleted_ts=message["ts"], event_ts=stamp, raw=message
    )
    payload["version"] = MAX_VERSION
    return payload


def membership_payload(
    *, source_name: str, channel: SlackChannel, user_id: str, joined: bool, event_ts: str
) -> dict:
    handle = channel.users[user_id].handle if user_id in channel.users else user_id
    return {
        "source": source_name,
        "external_id": f"{channel.id}/member/{user_id}/{event_ts}",
        "version": 1,
        "kind": "membership_added" if joined else "membership_removed",
        "occurred_at": iso(from_ts(event_ts)),
        "container": {
            "key": channel.key,
            "name": f"#{channel.name}" if channel.name else "",
            "members": [handle],
        },
        "author": handle,
    }
