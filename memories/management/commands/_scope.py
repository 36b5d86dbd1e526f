"""What the memories commands share: `--tenant` and `--user` read into ids and acl keys."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from almanac.models import Tenant
from memories.models import Memory


def tenant_id_of(slug: str | None) -> int | None:
    if not slug:
        return None
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        raise CommandError(f"no tenant {slug!r}")
    return tenant.pk


def private_scope_of(username: str, tenant_id: int | None) -> str | None:
    """The acl key of the user's own (private) memories; None when they have none."""
    users = get_user_model().objects.filter(username=username)
    if tenant_id is not None:
        users = users.filter(profile__tenant_id=tenant_id)
    found = list(users[:2])
    if not found:
        raise CommandError(f"no user {username!r}" + (" in that tenant" if tenant_id else ""))
    if len(found) > 1:
        raise CommandError(f"more than one user {username!r}: give --tenant")
    acl = Memory.objects.filter(owner=found[0], scope=Memory.Scope.USER).values_list("acl", flat=True).first()
    return acl[0] if acl else None
