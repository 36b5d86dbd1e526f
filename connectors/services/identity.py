"""External identities: a person's handle in a source, linked to a user when known.

Users are per tenant: every user is found through `almanac.services.users` within the
source's tenant, and an identity links only to a user of its own tenant.
"""

from __future__ import annotations

from django.db.models import Q

from almanac.models import Tenant
from almanac.services.users import users_by_email
from connectors.models import ExternalIdentity


def _user_by_email(*, tenant: Tenant, email: str):
    return users_by_email(tenant=tenant, emails=[email]).get(email.lower())


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


def identity_upsert_many(*, tenant: Tenant, source_kind: str, people: list[tuple[str, str, str]]) -> None:
    """`identity_upsert` for many (handle, display_name, email) at once: a poll of a large
    workspace costs a few queries, plus one per changed identity."""
    people = [(h.strip()[:300], n[:300], e.lower()) for h, n, e in people if h.strip()]
    existing = {
        i.handle: i
        for i in ExternalIdentity.objects.filter(
            tenant=tenant, source_kind=source_kind, handle__in=[h for h, _, _ in people]
        )
    }
    by_email = users_by_email(tenant=tenant, emails=[e for _, _, e in people])
    new = []
    for handle, name, email in people:
        user = by_email.get(email)
        identity = existing.get(handle)
        if identity is None:
            new.append(
                ExternalIdentity(
                    tenant=tenant, source_kind=source_kind, handle=handle, display_name=name, user=user
                )
            )
        elif (name and identity.display_name != name) or (user is not None and identity.user_id is None):
            identity.display_name = name or identity.display_name
            identity.user = identity.user or user
            identity.save(update_fields=["display_name", "user"])
    ExternalIdentity.objects.bulk_create(new, ignore_conflicts=True)


def identity_resolve(*, tenant: Tenant, source_kind: str, members: list[str]) -> list:
    """The users behind `members` (e-mails or handles), in three queries at most. Unknown ones
    are recorded with no user and contribute nothing: an unmatched handle is never granted
    anything."""
    users = users_by_email(tenant=tenant, emails=members)
    rest = [m for m in members if m.lower() not in users]
    if not rest:
        return list({u.pk: u for u in users.values()}.values())
    identities = (
        ExternalIdentity.objects.select_related("user__profile")
        .filter(tenant=tenant)
        .filter(Q(source_kind=source_kind, handle__in=rest) | Q(handle__in=[m for m in rest if "@" in m]))
    )
    known = set()
    for identity in identities:
        if identity.source_kind == source_kind:
            known.add(identity.handle)
        user = identity.user
        profile = getattr(user, "profile", None) if user is not None else None
        if user is not None and user.is_active and profile is not None and profile.tenant_id == tenant.pk:
            users.setdefault(identity.handle.lower(), user)
    new = [m for m in rest if m not in known and m.lower() not in users]
    if new:
        ExternalIdentity.objects.bulk_create(
            [ExternalIdentity(tenant=tenant, source_kind=source_kind, handle=m[:300]) for m in new],
            ignore_conflicts=True,
        )
    return list({u.pk: u for u in users.values()}.values())
