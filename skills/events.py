"""The fields every domain event's payload shares (docs/llm.md, Events), for the apps that
send them (`skills.signals.domain_event`): the acting user, a scope with its readers, and a
text cut to a bound (`text_truncated` says so; the rest is read by id through the acting
user's access filter)."""

from __future__ import annotations

from django.conf import settings

from almanac.services.users import user_name

READERS = {
    "user": "only {key}",
    "dept": "the members of department {key}",
    "project": "the members of project {key}",
    "tenant": "everyone in {key}",
}


def bounded(text: str, limit: int | None = None) -> tuple[str, bool]:
    """`text` cut to `limit` (default EVENT_TEXT_CHARS) characters, and whether it was cut."""
    limit = settings.EVENT_TEXT_CHARS if limit is None else limit
    return text[:limit], len(text) > limit


def scope_fields(scope: str, scope_key: str) -> dict:
    """`scope`, `scope_key`, `acl` (the group key whose members may read) and `readers` (in words)."""
    return {
        "scope": scope,
        "scope_key": scope_key,
        "acl": [f"{scope}:{scope_key}"],
        "readers": READERS[scope].format(key=scope_key),
    }


def actor_fields(user) -> dict:
    """The acting user: `user_id` and `user` (their name in the tenant), or None for both."""
    if user is None or not getattr(user, "pk", None):
        return {"user_id": None, "user": None}
    return {"user_id": user.pk, "user": user_name(user)}
