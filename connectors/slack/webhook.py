"""Slack Events API: signed requests (SLACK_SIGNING_SECRET) of messages, edits, deletions
and channel joins/leaves, normalized as the Slack importer and poller do."""

from __future__ import annotations

import re
import time

from django.conf import settings
from slack_sdk.signature import SignatureVerifier

from almanac.errors import ApplicationError
from connectors.constants import WEBHOOK_MAX_AGE_SECONDS
from connectors.models import Event, ExternalIdentity, Source
from connectors.services.ingest import event_ingest_batch
from connectors.services.webhook import SHAPE_ERRORS, field_error, json_body, shape_error, source_for
from connectors.slack import normalize as sl

SLACK_CONTENT_EVENTS = {"message"}
SLACK_MEMBER_EVENTS = {"member_joined_channel": True, "member_left_channel": False}
SLACK_TS_RE = re.compile(r"\d{1,12}(\.\d{1,6})?")  # "1700000000.000100"
SLACK_ID_RE = re.compile(r"[A-Za-z0-9]{1,64}")  # C…, G…, U…, W…
SLACK_TS = 'a Slack timestamp string such as "1700000000.000100"'
# A Unix time in seconds has 10 digits until the year 2286; longer is not a timestamp (and
# int() of thousands of digits raises ValueError).
MAX_TIMESTAMP_DIGITS = 12


def verify(request) -> None:
    secret = settings.SLACK_SIGNING_SECRET
    if not secret:
        raise ApplicationError("Slack events are not enabled: set SLACK_SIGNING_SECRET", status_code=503)
    timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
    signature = request.headers.get("X-Slack-Signature", "")
    if (
        not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= MAX_TIMESTAMP_DIGITS)
        or abs(time.time() - int(timestamp)) > WEBHOOK_MAX_AGE_SECONDS
    ):
        raise ApplicationError(
            "stale or missing X-Slack-Request-Timestamp (replayed request?)", status_code=401
        )
    # slack_sdk decodes the body as UTF-8 and compares str: a body that is not UTF-8 or a
    # signature that is not ASCII raises instead of failing the check. Neither is Slack's.
    try:
        valid = signature.isascii() and SignatureVerifier(secret).is_valid(
            body=request.body, timestamp=timestamp, signature=signature
        )
    except (UnicodeDecodeError, TypeError, ValueError):
        valid = False
    if not valid:
        raise ApplicationError("invalid Slack signature", status_code=401)


def _slack_channel(
    *, source: Source, channel_id: str, channel_type: str, user_ids: list[str]
) -> sl.SlackChannel:
    key = f"slack:channel:{channel_id}"
    last = (
        Event.objects.filter(source=source, container_key=key)
        .exclude(container_name="")
        .order_by("-id")
        .first()
    )
    identities = ExternalIdentity.objects.select_related("user").filter(
        tenant=source.tenant, source_kind="slack", handle__in=user_ids
    )
    users = {
        i.handle: sl.SlackUser(id=i.handle, name=i.display_name, email=i.user.email if i.user else "")
        for i in identities
    }
    public = channel_type == "channel" if channel_type else channel_id.startswith("C")
    # A channel no import or poll has named yet goes by its id: its threads still need a
    # topic page, and a later read with the name renames the container.
    name = last.container_name.lstrip("#") if last else channel_id
    workspace_url = str((source.config or {}).get("workspace_url") or "")
    return sl.SlackChannel(id=channel_id, name=name, public=public, users=users, workspace_url=workspace_url)


def _is_slack_ts(value) -> bool:
    return isinstance(value, str) and SLACK_TS_RE.fullmatch(value) is not None


def _slack_check_message(message, prefix: str) -> None:
    if not isinstance(message, dict):
        raise field_error("Slack event", prefix.rstrip("."), "an object")
    for name in ("ts", "thread_ts"):
        if message.get(name) is not None and not _is_slack_ts(message[name]):
            raise field_error("Slack event", prefix + name, SLACK_TS)
    for name in ("user", "text", "subtype"):
        if message.get(name) is not None and not isinstance(message[name], str):
            raise field_error("Slack event", prefix + name, "a string")
    edited = message.get("edited")
    if edited is not None and not isinstance(edited, dict):
        raise field_error("Slack event", prefix + "edited", "an object")
    if edited and edited.get("ts") not in (None, "") and not _is_slack_ts(edited["ts"]):
        raise field_error("Slack event", prefix + "edited.ts", SLACK_TS)


def _slack_check(event: dict, kind: str, channel_id) -> None:
    """Refuse a signed event whose fields this handler uses are of the wrong type (a 400
    naming the field): the channel and the ts become the stored ids (`<channel>/<ts>`)."""
    if not (isinstance(channel_id, str) and SLACK_ID_RE.fullmatch(channel_id)):
        raise field_error("Slack event", "event.channel", "a Slack channel id such as C0123ABC")
    if event.get("channel_type") is not None and not isinstance(event["channel_type"], str):
        raise field_error("Slack event", "event.channel_type", "a string")
    if event.get("event_ts") is not None and not _is_slack_ts(event["event_ts"]):
        raise field_error("Slack event", "event.event_ts", SLACK_TS)
    if kind in SLACK_MEMBER_EVENTS:
        if not (isinstance(event.get("user"), str) and SLACK_ID_RE.fullmatch(event["user"])):
            raise field_error("Slack event", "event.user", "a Slack user id such as U0123ABC")
        return
    _slack_check_message(event, "event.")
    if event.get("subtype") == "message_deleted" and not _is_slack_ts(event.get("deleted_ts")):
        raise field_error("Slack event", "event.deleted_ts", SLACK_TS)
    if event.get("subtype") == "message_changed":
        _slack_check_message(event.get("message"), "event.message.")


def payloads(*, source: Source, event: dict) -> list[dict]:
    if not isinstance(event, dict):
        raise field_error("Slack event callback", "event", "an object")
    kind, channel_id = event.get("type"), event.get("channel", "")
    if not isinstance(kind, str) or kind not in SLACK_CONTENT_EVENTS | set(SLACK_MEMBER_EVENTS):
        return []
    if isinstance(channel_id, dict):
        channel_id = channel_id.get("id", "")
    if not channel_id or event.get("channel_type") in {"im", "mpim"}:
        return []
    _slack_check(event, kind, channel_id)
    if kind in SLACK_MEMBER_EVENTS:
        channel = _slack_channel(
            source=source,
            channel_id=channel_id,
            channel_type=event.get("channel_type", ""),
            user_ids=[event["user"]],
        )
        return [
            sl.membership_payload(
                source_name=source.name,
                channel=channel,
                user_id=event["user"],
                joined=SLACK_MEMBER_EVENTS[kind],
                event_ts=event.get("event_ts") or str(time.time()),
            )
        ]
    subtype = event.get("subtype")
    message = event.get("message", {}) if subtype == "message_changed" else event
    users = [message.get("user") or ""] + sl.MENTION_RE.findall(message.get("text") or "")
    channel = _slack_channel(
        source=source, channel_id=channel_id, channel_type=event.get("channel_type", ""), user_ids=users
    )
    if subtype == "message_deleted":
        return [
            sl.deleted_payload(
                source_name=source.name,
                channel=channel,
                deleted_ts=event["deleted_ts"],
                event_ts=event.get("event_ts") or event.get("ts"),
                raw=event,
            )
        ]
    if subtype == "message_changed" and not (message.get("edited") or {}).get("ts"):
        message = {**message, "edited": {"ts": event.get("event_ts") or event.get("ts")}}
    return sl.message_payloads(source_name=source.name, channel=channel, message=message, with_members=False)


def handle(request) -> dict:
    verify(request)
    data = json_body(request)
    if data.get("type") == "url_verification":
        return {"challenge": data.get("challenge", "")}
    if data.get("type") != "event_callback":
        return {"ok": True, "accepted": 0, "duplicates": 0}
    source = source_for(Source.Kind.SLACK, field="team_id", value=str(data.get("team_id") or ""))
    try:
        items = payloads(source=source, event=data.get("event") or {})
    except SHAPE_ERRORS as exc:
        raise shape_error("Slack event", exc) from exc
    return {"ok": True, **event_ingest_batch(tenant=source.tenant, payloads=items)}
