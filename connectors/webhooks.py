"""Webhook receivers: Slack Events API and GitHub webhooks. Both verify the request's
signature before reading it and feed the same normalized events to `event_ingest_batch`."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time

from django.conf import settings
from django.utils import timezone
from slack_sdk.signature import SignatureVerifier

from almanac import jsonbody
from almanac.errors import ApplicationError
from connectors import conf
from connectors.importers import github as gh
from connectors.importers import iso
from connectors.importers import slack as sl
from connectors.models import Event, ExternalIdentity, Source
from connectors.schemas import MAX_VERSION
from connectors.services import event_ingest_batch

# What a signed payload of an unexpected shape raises while it is read (a field of the
# wrong type, a missing key, a timestamp that is no number): the sender's error, a 400.
_SHAPE_ERRORS = (TypeError, ValueError, KeyError, AttributeError, OverflowError, OSError)

log = logging.getLogger(__name__)

SLACK_CONTENT_EVENTS = {"message"}
SLACK_MEMBER_EVENTS = {"member_joined_channel": True, "member_left_channel": False}
SLACK_TS_RE = re.compile(r"\d{1,12}(\.\d{1,6})?")  # "1700000000.000100"
SLACK_ID_RE = re.compile(r"[A-Za-z0-9]{1,64}")  # C…, G…, U…, W…
SLACK_TS = 'a Slack timestamp string such as "1700000000.000100"'
# A Unix time in seconds has 10 digits until the year 2286; longer is not a timestamp (and
# int() of thousands of digits raises ValueError).
MAX_TIMESTAMP_DIGITS = 12


def _signature_matches(expected: str, given: str) -> bool:
    """Constant-time comparison, as bytes: a header may hold any character, and
    `compare_digest` raises TypeError on a str that is not ASCII."""
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def _field_error(what: str, field: str, expected: str) -> ApplicationError:
    log.warning("refused a %s: %s is not %s", what, field, expected)
    return ApplicationError(
        f"the {what} is not in the expected shape: {field} must be {expected}", status_code=400
    )


def _body(request) -> dict:
    data = jsonbody.loads(request.body)
    if not isinstance(data, dict):
        raise ApplicationError("the body must be a JSON object", status_code=400)
    return data


def _shape_error(what: str, exc: Exception) -> ApplicationError:
    log.warning("refused a %s of an unexpected shape: %s: %s", what, type(exc).__name__, exc)
    return ApplicationError(
        f"the {what} is not in the expected shape (a field is missing or of the wrong type)", status_code=400
    )


def _source(kind: str, *, field: str, value: str, contains: bool = False) -> Source:
    """The source a webhook belongs to: the one whose config names this workspace/repo;
    else the only source of that kind, provided it names none (a single-tenant setup)."""
    sources = Source.objects.select_related("tenant").filter(kind=kind, enabled=True)
    if value:
        lookup = {f"config__{field}__contains": [value]} if contains else {f"config__{field}": value}
        found = list(sources.filter(**lookup).order_by("pk"))
        if len({source.tenant_id for source in found}) > 1:  # the admin refuses a second claim
            raise ApplicationError(
                f"{value} is claimed by more than one tenant's {kind} source", status_code=409
            )
        if found:
            return found[0]
    candidates = list(sources[:2])
    if len(candidates) == 1 and not candidates[0].config.get(field):
        return candidates[0]
    raise ApplicationError(f"no {kind} source is configured for {value or 'this webhook'}", status_code=404)


# --- Slack -----------------------------------------------------------------------------


def slack_verify(request) -> None:
    secret = settings.SLACK_SIGNING_SECRET
    if not secret:
        raise ApplicationError("Slack events are not enabled: set SLACK_SIGNING_SECRET", status_code=503)
    timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
    signature = request.headers.get("X-Slack-Signature", "")
    if (
        not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= MAX_TIMESTAMP_DIGITS)
        or abs(time.time() - int(timestamp)) > conf.WEBHOOK_MAX_AGE_SECONDS
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
    return sl.SlackChannel(id=channel_id, name=name, public=public, users=users)


def _is_slack_ts(value) -> bool:
    return isinstance(value, str) and SLACK_TS_RE.fullmatch(value) is not None


def _slack_check_message(message, prefix: str) -> None:
    if not isinstance(message, dict):
        raise _field_error("Slack event", prefix.rstrip("."), "an object")
    for name in ("ts", "thread_ts"):
        if message.get(name) is not None and not _is_slack_ts(message[name]):
            raise _field_error("Slack event", prefix + name, SLACK_TS)
    for name in ("user", "text", "subtype"):
        if message.get(name) is not None and not isinstance(message[name], str):
            raise _field_error("Slack event", prefix + name, "a string")
    edited = message.get("edited")
    if edited is not None and not isinstance(edited, dict):
        raise _field_error("Slack event", prefix + "edited", "an object")
    if edited and edited.get("ts") not in (None, "") and not _is_slack_ts(edited["ts"]):
        raise _field_error("Slack event", prefix + "edited.ts", SLACK_TS)


def _slack_check(event: dict, kind: str, channel_id) -> None:
    """Refuse a signed event whose fields this handler uses are of the wrong type (a 400
    naming the field): the channel and the ts become the stored ids (`<channel>/<ts>`)."""
    if not (isinstance(channel_id, str) and SLACK_ID_RE.fullmatch(channel_id)):
        raise _field_error("Slack event", "event.channel", "a Slack channel id such as C0123ABC")
    if event.get("channel_type") is not None and not isinstance(event["channel_type"], str):
        raise _field_error("Slack event", "event.channel_type", "a string")
    if event.get("event_ts") is not None and not _is_slack_ts(event["event_ts"]):
        raise _field_error("Slack event", "event.event_ts", SLACK_TS)
    if kind in SLACK_MEMBER_EVENTS:
        if not (isinstance(event.get("user"), str) and SLACK_ID_RE.fullmatch(event["user"])):
            raise _field_error("Slack event", "event.user", "a Slack user id such as U0123ABC")
        return
    _slack_check_message(event, "event.")
    if event.get("subtype") == "message_deleted" and not _is_slack_ts(event.get("deleted_ts")):
        raise _field_error("Slack event", "event.deleted_ts", SLACK_TS)
    if event.get("subtype") == "message_changed":
        _slack_check_message(event.get("message"), "event.message.")


def slack_payloads(*, source: Source, event: dict) -> list[dict]:
    if not isinstance(event, dict):
        raise _field_error("Slack event callback", "event", "an object")
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


def slack_handle(request) -> dict:
    slack_verify(request)
    data = _body(request)
    if data.get("type") == "url_verification":
        return {"challenge": data.get("challenge", "")}
    if data.get("type") != "event_callback":
        return {"ok": True, "accepted": 0, "duplicates": 0}
    source = _source(Source.Kind.SLACK, field="team_id", value=str(data.get("team_id") or ""))
    try:
        payloads = slack_payloads(source=source, event=data.get("event") or {})
    except _SHAPE_ERRORS as exc:
        raise _shape_error("Slack event", exc) from exc
    return {"ok": True, **event_ingest_batch(tenant=source.tenant, payloads=payloads)}


# --- GitHub ----------------------------------------------------------------------------


def github_verify(request) -> None:
    secret = settings.GITHUB_WEBHOOK_SECRET
    if not secret:
        raise ApplicationError("GitHub webhooks are not enabled: set GITHUB_WEBHOOK_SECRET", status_code=503)
    expected = "sha256=" + hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
    if not _signature_matches(expected, request.headers.get("X-Hub-Signature-256", "")):
        raise ApplicationError("invalid X-Hub-Signature-256", status_code=401)


def _github_member_payload(*, source: Source, repo: gh.Repo, data: dict, delivery: str) -> list[dict]:
    login = (data.get("member") or {}).get("login", "")
    action = data.get("action")
    if not login or action not in {"added", "removed"}:
        return []
    return [
        {
            "source": source.name,
            "external_id": f"{repo.full_name}/member/{login}/{delivery or int(time.time())}",
            "kind": "membership_added" if action == "added" else "membership_removed",
            "occurred_at": iso(timezone.now()),
            "container": {"key": repo.key, "name": repo.full_name, "members": [login]},
            "author": (data.get("sender") or {}).get("login", ""),
        }
    ]


def _github_comment_payloads(*, source: Source, repo: gh.Repo, data: dict) -> list[dict]:
    comment, number = data.get("comment") or {}, (data.get("issue") or {}).get("number")
    if not comment or number is None:
        return []
    if data.get("action") == "deleted":
        base = gh.comment_payloads(source_name=source.name, repo=repo, number=number, comment=comment)[0]
        return [
            {
                **base,
                "kind": "message_deleted",
                "version": MAX_VERSION,  # a deletion is final, so a redelivery is a duplicate
                "occurred_at": iso(timezone.now()),
            }
        ]
    return gh.comment_payloads(source_name=source.name, repo=repo, number=number, comment=comment)


def _github_issue_deleted(*, source: Source, repo: gh.Repo, issue: dict) -> list[dict]:
    """A deleted issue takes its comments with it (GitHub sends no event for them): a
    final deletion for the issue and for each comment stored under it."""
    base = gh.issue_payloads(source_name=source.name, repo=repo, issue=issue)[-1]
    comments = (
        Event.objects.filter(source=source, external_id__startswith=f"{base['external_id']}/comment/")
        .values_list("external_id", flat=True)
        .distinct()
    )
    deletion = {
        **base,
        "kind": "message_deleted",
        "version": MAX_VERSION,
        "title": "",
        "text": "",
        "tags": {},
    }
    deletion["occurred_at"] = iso(timezone.now())
    return [{**deletion, "external_id": key} for key in [base["external_id"], *sorted(comments)]]


def _github_object(data: dict, name: str, what: str) -> dict:
    value = data.get(name)
    if not isinstance(value, dict):
        raise _field_error(what, name, "an object")
    return value


def _github_number(item: dict, field: str, what: str) -> None:
    number = item.get("number")
    # bool is an int: `true` would be issue #1
    if not (isinstance(number, int) and not isinstance(number, bool) and number > 0):
        raise _field_error(what, field, "a positive integer")


GITHUB_ITEM = {"issues": "issue", "pull_request": "pull_request", "issue_comment": "issue"}


def _github_check(*, event: str, data: dict) -> None:
    """Refuse a signed payload whose fields this handler uses are of the wrong type (a 400
    naming the field): the issue number becomes the stored id (`owner/name#<n>`), and a
    `private` that is not a boolean must not make a repository public."""
    what = f"GitHub {event} event"
    repository = _github_object(data, "repository", what)
    if "private" in repository and not isinstance(repository["private"], bool):
        raise _field_error(what, "repository.private", "true or false")
    if data.get("action") is not None and not isinstance(data["action"], str):
        raise _field_error(what, "action", "a string")
    item = GITHUB_ITEM.get(event)
    if item and data.get(item) is not None:
        _github_number(_github_object(data, item, what), f"{item}.number", what)
    if event == "issue_comment" and data.get("comment") is not None:
        comment_id = _github_object(data, "comment", what).get("id")
        if comment_id is not None and (not isinstance(comment_id, int) or isinstance(comment_id, bool)):
            raise _field_error(what, "comment.id", "an integer")
    if event == "member" and data.get("member") is not None:
        login = _github_object(data, "member", what).get("login")
        if not isinstance(login, str):
            raise _field_error(what, "member.login", "a string")


def github_payloads(*, source: Source, event: str, data: dict, delivery: str = "") -> list[dict]:
    info = data.get("repository") or {}
    if not info.get("full_name"):
        return []
    _github_check(event=event, data=data)
    repo = gh.Repo(full_name=info["full_name"], private=bool(info.get("private", True)), members=None)
    if event == "issues" and data.get("issue"):
        if data.get("action") == "deleted":
            return _github_issue_deleted(source=source, repo=repo, issue=data["issue"])
        return gh.issue_payloads(source_name=source.name, repo=repo, issue=data["issue"])
    if event == "pull_request" and data.get("pull_request"):
        return gh.issue_payloads(
            source_name=source.name, repo=repo, issue={**data["pull_request"], "pull_request": {"url": ""}}
        )
    if event == "issue_comment":
        return _github_comment_payloads(source=source, repo=repo, data=data)
    if event == "member":
        return _github_member_payload(source=source, repo=repo, data=data, delivery=delivery)
    return []


def github_handle(request) -> dict:
    github_verify(request)
    data = _body(request)
    event = request.headers.get("X-GitHub-Event", "")
    if event == "ping":
        return {"ok": True, "accepted": 0, "duplicates": 0}
    repository = data.get("repository") or {}
    full_name = repository.get("full_name", "") if isinstance(repository, dict) else ""
    if not isinstance(full_name, str):
        raise ApplicationError("repository.full_name must be a string", status_code=400)
    source = _source(Source.Kind.GITHUB, field="repos", value=full_name, contains=True)
    delivery = request.headers.get("X-GitHub-Delivery", "")[:100]
    try:
        payloads = github_payloads(source=source, event=event, data=data, delivery=delivery)
    except _SHAPE_ERRORS as exc:
        raise _shape_error(f"GitHub {event} event", exc) from exc
    return {"ok": True, **event_ingest_batch(tenant=source.tenant, payloads=payloads)}
