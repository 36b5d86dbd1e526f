"""Tenants, access groups (departments, projects) and memberships."""

from __future__ import annotations

import re

from django.db import transaction

from almanac.errors import ApplicationError
from almanac.models import (
    AccessGroup,
    Department,
    GroupMembership,
    Project,
    Tenant,
    key_part,
)
from almanac.services.audit import access_audit

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


BUILTIN = "builtin"


NAME_MAX = 200  # names and titles of tenants, departments, projects and profiles


def name_check(what: str, name: str) -> str:
    if len(name) > NAME_MAX:
        raise ApplicationError(f"{what} is {len(name)} characters long; at most {NAME_MAX}")
    return name


def tenant_create(*, slug: str, name: str = "") -> tuple[Tenant, bool]:
    """Create a tenant (idempotent on slug) and its `tenant:` group."""
    if not SLUG_RE.match(slug or ""):
        raise ApplicationError(f"invalid tenant slug {slug!r}: use lower-case letters, digits and '-'")
    name_check("tenant name", name)
    with transaction.atomic():
        tenant, created = Tenant.objects.get_or_create(slug=slug, defaults={"name": name or slug})
        if name and tenant.name != name:
            tenant.name = name
            tenant.save(update_fields=["name"])
        group_ensure(tenant=tenant, key=tenant.group_key, kind=AccessGroup.Kind.TENANT, name=tenant.name)
    return tenant, created


def group_ensure(*, tenant: Tenant, key: str, kind: str, name: str = "", builtin: bool = True) -> AccessGroup:
    group, _ = AccessGroup.objects.get_or_create(
        tenant=tenant, key=key, defaults={"kind": kind, "name": name or key, "builtin": builtin}
    )
    return group


def department_ensure(*, tenant: Tenant, name: str) -> Department:
    return _unit_ensure(model=Department, kind=AccessGroup.Kind.DEPARTMENT, tenant=tenant, name=name)


def project_ensure(*, tenant: Tenant, name: str) -> Project:
    return _unit_ensure(model=Project, kind=AccessGroup.Kind.PROJECT, tenant=tenant, name=name)


def _unit_ensure(*, model, kind: str, tenant: Tenant, name: str):
    """A department or project by name, with its access group."""
    what = model._meta.model_name
    name = name.strip()
    if not name:
        raise ApplicationError(f"{what} name may not be empty")
    name_check(f"{what} name", name)
    unit, _ = model.objects.get_or_create(tenant=tenant, key=key_part(name), defaults={"name": name})
    group_ensure(tenant=tenant, key=unit.group_key, kind=kind, name=unit.name)
    return unit


def membership_add(*, user, group: AccessGroup, origin: str, actor: str = "") -> None:
    membership, created = GroupMembership.objects.get_or_create(
        user=user, group=group, defaults={"origin": origin}
    )
    if created:
        access_audit(changes={group.pk: {user.pk}}, granted=True, actor=actor or origin, origin=origin)
    else:
        membership.save(update_fields=["confirmed_at"])


def membership_remove(*, user, group: AccessGroup, actor: str = "") -> int:
    deleted, _ = GroupMembership.objects.filter(user=user, group=group).exclude(origin=BUILTIN).delete()
    if deleted:
        access_audit(changes={group.pk: {user.pk}}, granted=False, actor=actor)
    return deleted


def memberships_of(queryset) -> dict[int, set[int]]:
    """{group id: user ids} of some memberships (what a delete of them revokes)."""
    found: dict[int, set[int]] = {}
    for gid, uid in queryset.values_list("group_id", "user_id"):
        found.setdefault(gid, set()).add(uid)
    return found
