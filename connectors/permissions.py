"""Permission rules of the connectors app (the base rules are `almanac.permissions`')."""

from __future__ import annotations

from almanac.permissions import sees_everything
from almanac.selectors import user_group_keys


def configures_endpoints(user) -> bool:
    """Where a source connects, what it reads on the server and credentials taken from the
    server's environment (env:VAR) are the installation's to decide: superusers only."""
    return bool(user and sees_everything(user))


def reads_item_contents(user) -> bool:
    """An inbox item's text is what people said: superusers only, in the admin."""
    return sees_everything(user)


def events_visible(events, *, user):
    """The inbox items `user` may see in the admin: all for a superuser, else those of the
    containers they belong to."""
    if sees_everything(user):
        return events
    return events.filter(container_key__in=user_group_keys(user))
