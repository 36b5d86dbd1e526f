"""Permission-aware reads for tenancy. `user_group_keys` is the single source of truth
for what a user may read: every read path (memories, wiki, context, UI, admin) uses it."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from almanac.models import AccessGroup, AgentKey, GroupMembership, Tenant, UserProfile

User = get_user_model()


def user_tenant(user) -> Tenant | None:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    profile = UserProfile.objects.select_related("tenant").filter(user_id=user.pk).first()
    return profile.tenant if profile else None


def user_group_keys(user) -> list[str]:
    """Group keys the user belongs to, resolved now (never cached), within their tenant.

    Fails closed: an anonymous user or one without a tenant gets no keys at all.
    """
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return []
    return list(
        GroupMembership.objects.filter(user_id=user.pk, group__tenant__profiles__user_id=user.pk)
        .values_list("group__key", flat=True)
        .order_by("group__key")
    )


def user_keys_subquery(user):
    """The same set as `user_group_keys`, as a subquery (one round-trip for hot paths)."""
    return GroupMembership.objects.filter(user_id=user.pk, group__tenant__profiles__user_id=user.pk).values(
        "group__key"
    )


def user_find_in_tenant(*, tenant: Tenant, ref: str):
    """A user of `tenant` by username or e-mail, or None."""
    ref = (ref or "").strip()
    if not ref:
        return None
    return (
        User.objects.filter(profile__tenant=tenant, is_active=True)
        .filter(Q(username=ref) | Q(email__iexact=ref))
        .order_by("id")
        .first()
    )


def agentkey_for_secret(raw: str) -> AgentKey | None:
    return (
        AgentKey.objects.select_related("tenant")
        .filter(hashed_secret=AgentKey.hash_secret(raw), revoked_at__isnull=True)
        .first()
    )


def group_members(*, tenant: Tenant, key: str) -> list[str]:
    return list(
        GroupMembership.objects.filter(group__tenant=tenant, group__key=key)
        .values_list("user__username", flat=True)
        .order_by("user__username")
    )


def group_get(*, tenant: Tenant, key: str) -> AccessGroup | None:
    return AccessGroup.objects.filter(tenant=tenant, key=key).first()
