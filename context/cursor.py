"""The second-pass cursor: an opaque, signed list of what earlier passes returned.

Bound to the user and a digest of the task, so a cursor cannot be replayed for another
user or another question. Tampered, expired or foreign cursors are a 400.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.conf import settings
from django.core import signing

from almanac.errors import ApplicationError

SALT = "context.cursor.v1"  # unchanged by the move: cursors already handed out stay valid


@dataclass
class Seen:
    """Ids already returned to this user for this task."""

    pages: set[int] = field(default_factory=set)
    sections: set[int] = field(default_factory=set)
    memories: set[int] = field(default_factory=set)
    whole: set[int] = field(default_factory=set)  # sections returned unsummarized (their copies go too)
    passes: int = 0


def task_digest(task: str) -> str:
    return hashlib.sha256(" ".join(task.split()).encode()).hexdigest()[:24]


def cursor_encode(*, user_id: int, task: str, seen: Seen) -> str:
    payload = {
        "u": user_id,
        "t": task_digest(task),
        "n": seen.passes,
        "p": sorted(seen.pages),
        "s": sorted(seen.sections),
        "m": sorted(seen.memories),
        "w": sorted(seen.whole),
    }
    return signing.dumps(payload, salt=SALT, compress=True)


def cursor_decode(*, token: str, user_id: int, task: str) -> Seen:
    try:
        payload = signing.loads(token, salt=SALT, max_age=settings.CONTEXT_CURSOR_MAX_AGE_SECONDS)
    except signing.SignatureExpired as exc:
        raise ApplicationError("cursor expired: start again without a cursor") from exc
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise ApplicationError("invalid cursor") from exc
    if not isinstance(payload, dict) or payload.get("u") != user_id or payload.get("t") != task_digest(task):
        raise ApplicationError("this cursor belongs to another user or task")
    try:
        return Seen(
            pages={int(i) for i in payload.get("p", [])},
            sections={int(i) for i in payload.get("s", [])},
            memories={int(i) for i in payload.get("m", [])},
            whole={int(i) for i in payload.get("w", [])},
            passes=int(payload.get("n", 0)),
        )
    except (TypeError, ValueError, OverflowError) as exc:
        raise ApplicationError("invalid cursor") from exc
