"""What the memories commands share: `--tenant` and `--user` read into ids and acl keys."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import Q

from almanac.models import Tenant, UserProfile
from memories.models import Memory


def tenant_id_of(slug: str | None) -> int | None:
    if not slug:
        return None
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        raise CommandError(f"no tenant {slug!r}")
    return tenant.pk


def private_scope_of(username: str, tenant_id: int | None) -> str | None:
    """The acl key of the user's own (private) memories; None when they have none. The
    name is the one in the tenant (`UserProfile.username`), or the login handle."""
    profiles = UserProfile.objects.filter(Q(username=username) | Q(user__username=username))
    if tenant_id is not None:
        profiles = profiles.filter(tenant_id=tenant_id)
    found = list(profiles.values_list("user_id", flat=True).distinct()[:2])
    if not found:
        raise CommandError(f"no user {username!r}" + (" in that tenant" if tenant_id else ""))
    if len(found) > 1:
        raise CommandError(f"more than one user {username!r}: give --tenant")
    acl = (
        Memory.objects.filter(owner_id=found[0], scope=Memory.Scope.USER)
        .values_list("acl", flat=True)
        .first()
    )
    return acl[0] if acl else None
