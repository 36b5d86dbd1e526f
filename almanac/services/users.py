"""Users of a tenant: creation, their departments and projects, and the personal key
`user:<username>` that follows a rename or a deletion (DESIGN §3)."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from almanac.errors import ApplicationError
from almanac.models import (
    AccessGroup,
    GroupMembership,
    Tenant,
    UserProfile,
)
from almanac.services.audit import access_audit, audit_record
from almanac.services.tenancy import (
    BUILTIN,
    department_ensure,
    group_ensure,
    memberships_of,
    name_check,
    project_ensure,
)
from almanac.signals import personal_key_changed

User = get_user_model()


@transaction.atomic
def membership_sync_builtin(*, user, actor: str = "directory") -> None:
    """Make the user's built-in memberships (user:, tenant:, dept:, project:) match the profile.

    Called after every change to a profile's tenant, departments or projects (services and
    admin). Memberships that come from connectors (origin != builtin) are left alone.
    """
    profile = UserProfile.objects.select_related("tenant").get(user=user)
    tenant = profile.tenant
    wanted = {
        _personal_group(user=user, tenant=tenant).pk,
        group_ensure(tenant=tenant, key=tenant.group_key, kind=AccessGroup.Kind.TENANT, name=tenant.name).pk,
    }
    for dept in profile.departments.all():
        wanted.add(
            group_ensure(
                tenant=tenant, key=dept.group_key, kind=AccessGroup.Kind.DEPARTMENT, name=dept.name
            ).pk
        )
    for project in profile.projects.all():
        wanted.add(
            group_ensure(
                tenant=tenant, key=project.group_key, kind=AccessGroup.Kind.PROJECT, name=project.name
            ).pk
        )
    current = GroupMembership.objects.filter(user=user, origin=BUILTIN)
    # A user moved to another tenant keeps nothing from the old one.
    leaving = current.exclude(group_id__in=wanted) | GroupMembership.objects.filter(user=user).exclude(
        group__tenant=tenant
    )
    revoked = memberships_of(leaving)
    GroupMembership.objects.filter(pk__in=list(leaving.values_list("pk", flat=True))).delete()
    have = set(
        GroupMembership.objects.filter(user=user, group_id__in=wanted).values_list("group_id", flat=True)
    )
    GroupMembership.objects.bulk_create(
        [GroupMembership(user=user, group_id=gid, origin=BUILTIN) for gid in wanted - have]
    )
    access_audit(changes=revoked, granted=False, actor=actor, origin=BUILTIN)
    access_audit(changes={gid: {user.pk} for gid in wanted - have}, granted=True, actor=actor, origin=BUILTIN)


def personal_key(username: str) -> str:
    return f"user:{username}"


def _personal_groups_held(*, user, tenant: Tenant | None = None):
    """The personal groups `user` is a built-in member of (one, unless renamed since)."""
    groups = AccessGroup.objects.filter(
        kind=AccessGroup.Kind.USER, memberships__user=user, memberships__origin=BUILTIN
    )
    return groups if tenant is None else groups.filter(tenant=tenant)


def _personal_group(*, user, tenant: Tenant) -> AccessGroup:
    """The user's personal group `user:<username>`, created once and moved along on a rename.

    Fails closed (ApplicationError 409) when that key belongs to someone else: another user
    holds it (a rename that bypassed the model), or it was left by a former user.
    """
    key = personal_key(user.username)
    group = AccessGroup.objects.select_for_update().filter(tenant=tenant, key=key).first()
    if group is not None:
        _check_claim(group=group, user=user)
    for old in (
        _personal_groups_held(user=user, tenant=tenant).exclude(key=key).select_for_update(of=("self",))
    ):
        if group is not None:
            raise ApplicationError(
                f"user {user.username!r} holds both {old.key} and {key}; merge them by hand", status_code=409
            )
        group = _personal_key_move(group=old, key=key, user=user)
    return group or group_ensure(tenant=tenant, key=key, kind=AccessGroup.Kind.USER, name=user.username)


def personal_key_problem(*, user, username: str) -> str | None:
    """Why `user` (None: a new user) may not be called `username`: the personal key
    `user:<username>` of their tenant exists already and is not theirs (another user's, or
    left by a former one). None when the name is free. For forms, before anything is saved."""
    tenant_id = (
        UserProfile.objects.filter(user=user).values_list("tenant_id", flat=True).first()
        if user is not None and user.pk
        else None
    )
    groups = AccessGroup.objects.filter(key=personal_key(username), kind=AccessGroup.Kind.USER)
    groups = groups.filter(tenant_id=tenant_id) if tenant_id is not None else groups
    for group in groups:
        if user is None or not user.pk or not group.memberships.filter(user=user, origin=BUILTIN).exists():
            return (
                f"the personal key {group.key} exists already (another user's, or left by a former "
                "one): choose another name, or retire that key first"
            )
    return None


def _check_claim(*, group: AccessGroup, user) -> None:
    members = set(group.memberships.filter(origin=BUILTIN).values_list("user_id", flat=True))
    if members - {user.pk}:
        raise ApplicationError(
            f"the personal key {group.key} belongs to another user (renamed without moving it?)",
            status_code=409,
        )
    if user.pk not in members and group.created_at < user.date_joined:
        raise ApplicationError(
            f"the personal key {group.key} was left by a former user; retire it first "
            "(almanac.services.personal_key_retire)",
            status_code=409,
        )


def _personal_key_move(*, group: AccessGroup, key: str, user) -> AccessGroup:
    old = group.key
    group.key, group.name = key, user.username
    group.save(update_fields=["key", "name"])
    replies = personal_key_changed.send(
        sender=AccessGroup, tenant_id=group.tenant_id, old_key=old, new_key=key, user=user
    )
    audit_record(
        action="user.rename",
        tenant=group.tenant,
        actor="system",
        object_type="user",
        object_id=user.pk,
        detail={"old_key": old, "new_key": key, "rows": _counts(replies)},
    )
    return group


def _counts(replies) -> dict:
    return {receiver.__module__: reply for receiver, reply in replies if isinstance(reply, int)}


@transaction.atomic
def user_personal_key_sync(*, user) -> None:
    """After `user` was saved: if they were renamed, their personal key (and every acl entry
    and scope key using it) moves to the new name, in this transaction."""
    if not _personal_groups_held(user=user).exclude(key=personal_key(user.username)).exists():
        return  # not renamed (one query per save of a user)
    profile = UserProfile.objects.select_related("tenant").filter(user=user).first()
    if profile is not None:
        _personal_group(user=user, tenant=profile.tenant)


@transaction.atomic
def user_personal_keys_retire(*, user) -> int:
    """`user` is being deleted: their personal key is retired, so a new user of that name
    starts with nothing. Returns how many keys."""
    groups = _personal_groups_held(user=user)
    profile = UserProfile.objects.filter(user=user).first()
    if profile is not None:  # also a key of theirs that lost its membership
        groups = groups | AccessGroup.objects.filter(
            tenant_id=profile.tenant_id, kind=AccessGroup.Kind.USER, key=personal_key(user.username)
        )
    done = 0
    for group in groups.distinct().order_by("pk"):
        others = group.memberships.filter(origin=BUILTIN).exclude(user=user).exists()
        if not others:
            _personal_key_retire(group=group, user=user)
            done += 1
    return done


@transaction.atomic
def personal_key_retire(*, tenant: Tenant, key: str) -> None:
    """Retire a personal key no user holds any more (left by a user deleted before keys were
    retired with their user): what its scope holds is deleted, then the group."""
    group = (
        AccessGroup.objects.select_for_update()
        .filter(tenant=tenant, key=key, kind=AccessGroup.Kind.USER)
        .first()
    )
    if group is None:
        raise ApplicationError(f"no personal key {key!r}", status_code=404)
    if group.memberships.filter(origin=BUILTIN).exists():
        raise ApplicationError(f"{key} is still some user's personal key", status_code=409)
    _personal_key_retire(group=group, user=None)


def _personal_key_retire(*, group: AccessGroup, user) -> None:
    replies = personal_key_changed.send(
        sender=AccessGroup, tenant_id=group.tenant_id, old_key=group.key, new_key=None, user=user
    )
    audit_record(
        action="user.key_retire",
        tenant=group.tenant,
        actor="system",
        object_type="user",
        object_id=user.pk if user is not None else "",
        detail={"key": group.key, "rows": _counts(replies)},
    )
    group.delete()


@transaction.atomic
@transaction.atomic  # a refused department name leaves no half-made user
def user_create(
    *,
    tenant: Tenant,
    username: str,
    email: str = "",
    departments: list[str] | None = None,
    projects: list[str] | None = None,
    password: str | None = None,
    is_admin: bool = False,
    display_name: str = "",
    title: str = "",
):
    """Create or update a user of `tenant` (idempotent on username)."""
    if not re.match(r"^[\w.@+-]{1,150}$", username or ""):
        raise ApplicationError(f"invalid username {username!r}")
    user = User.objects.filter(username=username).first()
    if user is not None:
        profile = UserProfile.objects.filter(user=user).select_related("tenant").first()
        if profile and profile.tenant_id != tenant.pk:
            raise ApplicationError(f"user {username!r} already belongs to tenant {profile.tenant.slug!r}")
    else:
        user = User(username=username)
    name_check("display name", display_name)
    name_check("title", title)
    if email:
        try:
            validate_email(email)
        except ValidationError as exc:
            raise ApplicationError(f"invalid email {email!r}") from exc
        user.email = email
    if password:
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise ApplicationError("password refused: " + " ".join(exc.messages)) from exc
        user.set_password(password)
    elif not user.pk:
        user.set_unusable_password()
    if is_admin:
        user.is_staff = user.is_superuser = True
    user.save()
    profile, _ = UserProfile.objects.get_or_create(user=user, defaults={"tenant": tenant})
    if display_name or title:
        profile.display_name = display_name or profile.display_name
        profile.title = title or profile.title
        profile.save(update_fields=["display_name", "title"])
    for name in departments or []:
        profile.departments.add(department_ensure(tenant=tenant, name=name))
    for name in projects or []:
        profile.projects.add(project_ensure(tenant=tenant, name=name))
    membership_sync_builtin(user=user)
    return user


def user_set_departments(*, user, names: list[str]) -> None:
    profile = user.profile
    with transaction.atomic():
        profile.departments.set([department_ensure(tenant=profile.tenant, name=n) for n in names])
        membership_sync_builtin(user=user)


def user_set_projects(*, user, names: list[str]) -> None:
    profile = user.profile
    with transaction.atomic():
        profile.projects.set([project_ensure(tenant=profile.tenant, name=n) for n in names])
        membership_sync_builtin(user=user)
