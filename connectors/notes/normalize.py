"""Meeting notes: normalization of one Markdown file with front matter (title, date,
attendees, customer, project; optional public) — the shape note tools export. Attendees form the
access group `notes:meeting:<hash of the file path>`; an edited file is a new version.
A file that cannot be read (broken YAML, a field of the wrong type) is logged and skipped:
it never stops the files after it."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime
from pathlib import Path

import dateparser
import frontmatter
import yaml

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.schemas import link_or_empty
from connectors.services.normalize import digest, iso, short_hash, version_for_content

log = logging.getLogger(__name__)


def _date(value, fallback: datetime) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if value:
        parsed = dateparser.parse(str(value), settings={"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True})
        if parsed:
            return parsed
    return fallback


def _list(value, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.replace("，", ",").split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ApplicationError(f"{field} must be a list of e-mails or a comma-separated string")
    return [v.strip() for v in value if v.strip()]


def _public(value) -> bool:
    # Strict: a stray string ("false", "no") must never make a note readable by everyone.
    if value is None or isinstance(value, bool):
        return bool(value)
    raise ApplicationError("public must be true or false")


def _title(post, path: Path) -> str:
    if post.get("title"):
        return str(post["title"])
    for line in post.content.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return path.stem


def note_payload(*, tenant: Tenant, source_name: str, root: Path, path: Path) -> dict:
    """The file's event. ApplicationError (naming the file) when it cannot be read."""
    rel = path.relative_to(root).as_posix()
    try:
        post = frontmatter.loads(path.read_text(encoding="utf-8-sig"))  # a BOM is no part of the front matter
        mtime = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    except (OSError, ValueError, yaml.YAMLError) as exc:  # UnicodeDecodeError is a ValueError
        raise ApplicationError(f"{rel}: cannot read the note: {type(exc).__name__}: {exc}") from exc
    try:
        return _payload(tenant=tenant, source_name=source_name, rel=rel, post=post, path=path, mtime=mtime)
    except ApplicationError as exc:
        raise ApplicationError(f"{rel}: {exc.message}") from exc
    except (TypeError, ValueError) as exc:  # front matter of an unexpected shape
        raise ApplicationError(f"{rel}: unexpected front matter: {type(exc).__name__}: {exc}") from exc


def _payload(*, tenant: Tenant, source_name: str, rel: str, post, path: Path, mtime: datetime) -> dict:
    attendees = [a.lower() if "@" in a else a for a in _list(post.get("attendees"), "attendees")]
    key = f"notes:meeting:{short_hash(rel)}"
    tags = {k: post[k] for k in ("customer", "project") if post.get(k)}
    payload = {
        "source": source_name,
        "external_id": rel,
        "kind": "meeting_note",
        "occurred_at": iso(_date(post.get("date"), mtime)),
        "container": {
            "key": key,
            "name": _title(post, path)[:300],
            "members": attendees,
            "public": _public(post.get("public")),
        },
        "thread_key": key,
        "author": attendees[0] if attendees else "",
        "title": _title(post, path)[:500],
        "text": post.content.strip(),
        "tags": tags,
    }
    # The note's page in the tool it came from (Granola, Notion), when the front matter says.
    link = link_or_empty(str(post.get("url") or post.get("link") or post.get("source") or ""))
    if link:
        payload["url"] = link
    content = digest(payload)
    payload["version"] = version_for_content(
        tenant=tenant, source_name=source_name, external_id=rel, content_digest=content
    )
    payload["raw"] = {
        "digest": content,
        "path": rel,
        "metadata": {k: str(v) for k, v in post.metadata.items()},
    }
    return payload
