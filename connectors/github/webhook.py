"""GitHub webhooks: requests signed with X-Hub-Signature-256 (GITHUB_WEBHOOK_SECRET) for
issues, pull requests, comments and repository members, normalized as the GitHub importer
and poller do."""

from __future__ import annotations

import hashlib
import hmac
import time

from django.conf import settings
from django.utils import timezone

from almanac.errors import ApplicationError
from connectors.github import normalize as gh
from connectors.models import Event, Source
from connectors.schemas import MAX_VERSION
from connectors.services.ingest import event_ingest_batch
from connectors.services.normalize import iso
from connectors.services.webhook import SHAPE_ERRORS, field_error, json_body, shape_error, source_for


def _signature_matches(expected: str, given: str) -> bool:
    """Constant-time comparison, as bytes: a header may hold any character, and
    `compare_digest` raises TypeError on a str that is not ASCII."""
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def verify(request) -> None:
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
        raise field_error(what, name, "an object")
    return value


def _github_number(item: dict, field: str, what: str) -> None:
    number = item.get("number")
    # bool is an int: `true` would be issue #1
    if not (isinstance(number, int) and not isinstance(number, bool) and number > 0):
        raise field_error(what, field, "a positive integer")


GITHUB_ITEM = {"issues": "issue", "pull_request": "pull_request", "issue_comment": "issue"}


def _github_check(*, event: str, data: dict) -> None:
    """Refuse a signed payload whose fields this handler uses are of the wrong type (a 400
    naming the field): the issue number becomes the stored id (`owner/name#<n>`), and a
    `private` that is not a boolean must not make a repository public."""
    what = f"GitHub {event} event"
    repository = _github_object(data, "repository", what)
    if "private" in repository and not isinstance(repository["private"], bool):
        raise field_error(what, "repository.private", "true or false")
    if data.get("action") is not None and not isinstance(data["action"], str):
        raise field_error(what, "action", "a string")
    item = GITHUB_ITEM.get(event)
    if item and data.get(item) is not None:
        _github_number(_github_object(data, item, what), f"{item}.number", what)
    if event == "issue_comment" and data.get("comment") is not None:
        comment_id = _github_object(data, "comment", what).get("id")
        if comment_id is not None and (not isinstance(comment_id, int) or isinstance(comment_id, bool)):
            raise field_error(what, "comment.id", "an integer")
    if event == "member" and data.get("member") is not None:
        login = _github_object(data, "member", what).get("login")
        if not isinstance(login, str):
            raise field_error(what, "member.login", "a string")


def payloads(*, source: Source, event: str, data: dict, delivery: str = "") -> list[dict]:
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


def handle(request) -> dict:
    verify(request)
    data = json_body(request)
    event = request.headers.get("X-GitHub-Event", "")
    if event == "ping":
        return {"ok": True, "accepted": 0, "duplicates": 0}
    repository = data.get("repository") or {}
    full_name = repository.get("full_name", "") if isinstance(repository, dict) else ""
    if not isinstance(full_name, str):
        raise ApplicationError("repository.full_name must be a string", status_code=400)
    source = source_for(Source.Kind.GITHUB, field="repos", value=full_name, contains=True)
    delivery = request.headers.get("X-GitHub-Delivery", "")[:100]
    try:
        items = payloads(source=source, event=event, data=data, delivery=delivery)
    except SHAPE_ERRORS as exc:
        raise shape_error(f"GitHub {event} event", exc) from exc
    return {"ok": True, **event_ingest_batch(tenant=source.tenant, payloads=items)}
