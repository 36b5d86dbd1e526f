"""Permission rules of the base app, and the two every app's admin builds on.

Superusers run the installation: they see and change every tenant's rows and every field
in the admin. Staff who are not (a tenant's admins) see their own tenant's rows only,
without the fields hidden from them (what people said, what the jobs set, the grants).
Every check of `is_superuser`, `is_staff` or a model permission lives in a `permissions.py`
module (tests/test_permissions.py keeps it so).
"""

from __future__ import annotations

from django.db.models import Q


def sees_everything(user) -> bool:
    """A superuser: every tenant's rows and every field, in the admin and its history."""
    return bool(user.is_superuser)


def runs_installation(user) -> bool:
    """An active superuser: what belongs to the whole installation (the task queue, the
    skills every tenant runs, rebuilds), whatever model permissions staff were given."""
    return bool(user.is_active and user.is_superuser)


def users_manageable(users, *, user):
    """The users `user` may manage in the admin: all for a superuser; otherwise not the
    other admins (setting their password would be becoming them)."""
    if sees_everything(user):
        return users
    return users.filter(is_superuser=False).exclude(Q(is_staff=True) & ~Q(pk=user.pk))


def governs_units_only(user) -> bool:
    """Staff who hold an `AdminScope` govern its departments and projects only (a department
    admin); a superuser's scope, if any, is ignored: they see everything."""
    return bool(user.is_active and user.is_staff and not user.is_superuser)
