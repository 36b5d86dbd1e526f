"""Who may use the governance pages (docs/operations.md, Roles). The rows each admin sees
are those of the admins they build on (the user admin, the memory admin): scoped to a
tenant, and for a department admin to their departments and projects."""

from __future__ import annotations

from almanac.permissions import sees_everything


def may_govern_users(user) -> bool:
    """A user's governance page: superusers, and staff who may view users."""
    return bool(user.is_active and user.is_staff and (user.is_superuser or user.has_perm("auth.view_user")))


def may_purge_user_data(user) -> bool:
    """Purging everything about a user: who may delete memories and change users."""
    return bool(
        user.is_active
        and user.is_staff
        and (
            user.is_superuser
            or (user.has_perm("memories.delete_memory") and user.has_perm("auth.change_user"))
        )
    )


def may_read_sessions(user) -> bool:
    """A person's conversations with agents are for superusers only, as in the session admin."""
    return sees_everything(user)


def may_run_lifecycle(user) -> bool:
    """Previews and "Run now" of decay and compression: who may change the lifecycle settings."""
    return bool(
        user.is_active
        and user.is_staff
        and (user.is_superuser or user.has_perm("memories.change_lifecyclesettings"))
    )
