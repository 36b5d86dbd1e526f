"""GitHub: normalization of issues, pull requests and comments in the REST API's JSON shape
(shared by the JSON-export importer, the PyGithub poller and the webhook). Also reads the
`gh issue list --json ...` shape. The repo's collaborators form the access group
`github:repo:<owner/name>` (a public repo is public); labels `customer:X` / `project:Y` are tags.

Versions: the item's first version is int(created_at); an update of an open item adds
int(updated_at); closing adds `issue_closed` at int(closed_at). A closed item updated after
it closed adds its content at int(updated_at) and `issue_closed` again one version later, at
the same time, so the edit shows and the item stays closed (the current version is the
latest by event time, then version). Two changes within one second share a version: ingest
stores the second as the next free version (connectors.services.ingest._version_for). Each
item's events come newest first, so that a re-read older version, which carries today's
content, finds the newer version stored and is a duplicate, not a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from almanac.models import Tenant
from connectors.services.identity import identity_upsert
from connectors.services.normalize import iso


@dataclass
class Repo:
    full_name: str
    private: bool = True
    members: list[str] | None = None  # logins (e-mails when given)

    @property
    def key(self) -> str:
        return f"github:repo:{self.full_name}"


def _get(data: dict, *names, default=None):
    for name in names:
        if data.get(name) not in (None, ""):
            return data[name]
    return default


def _dt(value) -> datetime | None:
    if not value:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _url(value) -> str:
    """Only http(s) addresses become links; anything else (an odd export) is dropped."""
    value = str(value or "")
    return value[:1000] if value.lower().startswith(("https://", "http://")) else ""


def _login(data: dict) -> str:
    user = _get(data, "user", "author") or {}
    return user.get("login", "") if isinstance(user, dict) else str(user)


def _tags(issue: dict) -> dict:
    tags = {}
    for label in issue.get("labels") or []:
        name = label.get("name", "") if isinstance(label, dict) else str(label)
        kind, _, value = name.partition(":")
        if kind.strip().lower() in {"customer", "project"} and value.strip():
            tags[kind.strip().lower()] = value.strip()
    return tags


def is_pull_request(issue: dict) -> bool:
    return bool(issue.get("pull_request")) or "/pull/" in str(_get(issue, "html_url", "url", default=""))


def _container(repo: Repo) -> dict:
    container = {"key": repo.key, "name": repo.full_name, "public": not repo.private}
    if repo.members is not None:
        container["members"] = repo.members
    return container


def issue_thread(repo: Repo, number: int) -> str:
    return f"github:issue:{repo.full_name}#{number}"


def issue_payloads(*, source_name: str, repo: Repo, issue: dict) -> list[dict]:
    number = issue["number"]
    created = _dt(_get(issue, "created_at", "createdAt"))
    updated = _dt(_get(issue, "updated_at", "updatedAt")) or created
    closed = _dt(_get(issue, "closed_at", "closedAt"))
    state = str(issue.get("state", "open")).lower()
    kind = "pull_request" if is_pull_request(issue) else "issue"
    base = {
        "source": source_name,
        "external_id": f"{repo.full_name}#{number}",
        "container": _container(repo),
        "thread_key": issue_thread(repo, number),
        "author": _login(issue),
        "title": str(issue.get("title", ""))[:500],
        "text": str(issue.get("body") or ""),
        "tags": _tags(issue),
        "url": _url(_get(issue, "html_url", "url", default="")),
        "raw": {
            k: issue.get(k)
            for k in ("number", "state", "title", "created_at", "updated_at", "closed_at")
            if k in issue
        },
    }
    first = int(created.timestamp())
    events = [{**base, "version": first, "kind": kind, "occurred_at": iso(created)}]
    if state == "closed" and closed:
        closing = {**base, "version": max(int(closed.timestamp()), first + 1), "kind": "issue_closed"}
        events.insert(0, {**closing, "occurred_at": iso(closed)})
        if updated and int(updated.timestamp()) > int(closed.timestamp()):
            edited = max(int(updated.timestamp()), closing["version"] + 1)
            events[:0] = [
                {**base, "version": edited, "kind": kind, "occurred_at": iso(updated)},
                {**closing, "version": edited + 1, "occurred_at": iso(updated)},
            ]
    elif updated and int(updated.timestamp()) > first:
        events.insert(
            0, {**base, "version": int(updated.timestamp()), "kind": kind, "occurred_at": iso(updated)}
        )
    return events  # newest first: see message_payloads in slack/normalize.py


def comment_payloads(*, source_name: str, repo: Repo, number: int, comment: dict) -> list[dict]:
    created = _dt(_get(comment, "created_at", "createdAt"))
    updated = _dt(_get(comment, "updated_at", "updatedAt")) or created
    comment_id = _get(comment, "id", default=None) or int(created.timestamp())
    base = {
        "source": source_name,
        "external_id": f"{repo.full_name}#{number}/comment/{comment_id}",
        "container": _container(repo),
        "thread_key": issue_thread(repo, number),
        "author": _login(comment),
        "text": str(comment.get("body") or ""),
        "url": _url(_get(comment, "html_url", "url", default="")),
        "raw": {"id": comment_id, "issue": number},
    }
    events = [{**base, "version": 1, "kind": "message", "occurred_at": iso(created)}]
    if updated and updated > created:
        events.insert(
            0,
            {
                **base,
                "version": int(updated.timestamp()),
                "kind": "message_changed",
                "occurred_at": iso(updated),
            },
        )
    return events  # newest first


def issue_number_of_comment(comment: dict) -> int | None:
    url = str(comment.get("issue_url") or "")
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else None


def repo_members(*, tenant: Tenant, collaborators: list) -> list[str]:
    """Collaborator logins, recording each as an identity (linked when an e-mail is given)."""
    members = []
    for person in collaborators:
        login = person.get("login", "") if isinstance(person, dict) else str(person)
        if not login:
            continue
        email = (person.get("email") or "") if isinstance(person, dict) else ""
        identity_upsert(
            tenant=tenant,
            source_kind="github",
            handle=login,
            display_name=person.get("name") or "" if isinstance(person, dict) else "",
            email=email,
        )
        members.append(login)
    return members
