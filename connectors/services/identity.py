"""External identities: a person's handle in a source, linked to a user when known."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from almanac.models import Tenant
from connectors.models import ExternalIdentity

User = get_user_model()


def _user_by_email(*, tenant: Tenant, email: str):
    if not email or "@" not in email:
        return None
    return (
        User.objects.filter(profile__tenant=tenant, is_active=True, email__iexact=email)
        .order_by("id")
        .first()
    )


def identity_upsert(
    *, tenant: Tenant, source_kind: str, handle: str, display_name: str = "", email: str = ""
) -> ExternalIdentity:
    """Record a handle; link it to the tenant's user with that e-mail when there is one.

    A link made by an admin (user set, no e-mail match) is never undone here.
    """
    handle = handle.strip()[:300]
    user = _user_by_email(tenant=tenant, email=email or handle)
    identity, created = ExternalIdentity.objects.get_or_create(
        tenant=tenant,
        source_kind=source_kind,
        handle=handle,
        defaults={"display_name": display_name[:300], "user": user},
    )
    if not created:
        fields = []
        if display_name and identity.display_name != display_name[:300]:
            identity.display_name = display_name[:300]
            fields.append("display_name")
        if user is not None and identity.user_id is None:
            identity.user = user
            fields.append("user")
        if fields:
            identity.save(update_fields=fields)
    return identity


def identity_resolve(*, tenant: Tenant, source_kind: str, members: list[str]) -> list:
    """The users behind `members` (e-mails or handles). Unknown ones are recorded with no
    user and contribute nothing: an unmatched handle is never granted anything."""
    users: dict[int, object] = {}
    for member in members:
        user = _user_by_email(tenant=tenant, email=member)
        if user is None:
            identity = (
                ExternalIdentity.objects.select_related("user")
                .filter(tenant=tenant)
                .filter(
                    Q(source_kind=source_kind, handle=member) | Q(handle__iexact=member, handle__contains="@")
                )
                .exclude(user=None)
                .filter(user__profile__tenant=tenant, user__is_active=True)
                .first()
            )
            user = identity.user if identity else None
        if user is None:
            identity_upsert(tenant=tenant, source_kind=source_kind, handle=member)
            continue
        users[user.pk] = user
    return list(users.values())
