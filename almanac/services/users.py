"""Users of a tenant: the one resolver from a name to a user, creation, their departments
and projects, and the personal key `user:<username>` that follows a rename or a deletion
(docs/design.md, Identity and access).

Names are per tenant: `UserProfile.username` is unique in its tenant, and the same name in
two tenants is two people. `auth.User.username` is the installation-wide handle that Django
needs unique: the name itself while no other user holds it (every user made before names
were per tenant keeps theirs), else `<tenant-slug>:<name>`. No name can contain ":", so a
handle's name is what follows its last ":" (`user_name`), and a rename is a change of the
handle, as it always was (Django's UserAdmin, the shell): the profile follows it.
"""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import connection, transaction
from django.db.models import Q
from django.db.models.functions import Lower

from almanac.errors import ApplicationError
from almanac.models import (
    AccessGroup,
    GroupMembership,
    Tenant,
    UserProfile,
)
from almanac.search.rows import instance, select_list
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
NAME_RE = re.compile(r"^[\w.@+-]{1,150}$")
# A handle: a name, or `<tenant-slug>:<name>` (see the module's docstring).
HANDLE_RE = re.compile(r"^(?:[-\w]{1,64}:)?[\w.@+-]{1,150}$")


def user_name(user) -> str:
    """The user's name in their tenant: their handle without its `<tenant>:` prefix."""
    return user.username.rpartition(":")[2]


def user_handle(*, tenant: Tenant, name: str, user=None) -> str:
    """The handle for `name` in `tenant` (for `user`, None: a new one): the name while no
    other user holds it as a handle, else `<tenant-slug>:<name>`."""
    others = User.objects.exclude(pk=user.pk) if user is not None and user.pk else User.objects.all()
    if not others.filter(username=name).exists():
        return name
    handle = f"{tenant.slug}:{name}"
    if len(handle) > User._meta.get_field("username").max_length or others.filter(username=handle).exists():
        raise ApplicationError(f"no free handle for {name!r} in tenant {tenant.slug!r}", status_code=409)
    return handle


def profile_name_fill(*, profile: UserProfile) -> None:
    """A profile saved without a name (the admin's, the shell's) takes its user's."""
    if not profile.username and profile.user_id:
        profile.username = user_name(profile.user)


def _profile_name_sync(*, user) -> str:
    """The profile's name follows the handle's (a rename); the tenant's unique (tenant,
    username) refuses a name another user of it has."""
    name = user_name(user)
    profile = UserProfile.objects.filter(user=user).exclude(username=name)
    if profile.exists():
        if UserProfile.objects.filter(username=name, tenant__profiles__user=user).exclude(user=user).exists():
            raise ApplicationError(f"another user of this tenant is called {name!r}", status_code=409)
        profile.update(username=name)
    return name


def user_resolve(*, tenant: Tenant, ref: str):
    """THE resolver from a name to a user: the active user of `tenant` whose name in it is
    `ref`, else whose e-mail is `ref` (case-insensitive), or None. Never a user of another
    tenant, whatever the name. A raw statement: every agent call starts with it."""
    ref = (ref or "").strip()
    if not ref:
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT {select_list(User, "u")} FROM {User._meta.db_table} u
                JOIN {UserProfile._meta.db_table} p ON p.user_id = u.id
                WHERE p.tenant_id = %s AND u.is_active
                  AND (p.username = %s OR UPPER(u.email::text) = UPPER(%s))
                ORDER BY p.username = %s DESC, u.id LIMIT 1""",
            [tenant.pk, ref, ref, ref],
        )
        row = cursor.fetchone()
    return instance(User, row) if row else None


def users_by_email(*, tenant: Tenant, emails) -> dict:
    """Active users of `tenant` by lower-cased e-mail (the first made, when two share one):
    how connectors map the people of a source onto users, never across tenants."""
    emails = {e.lower() for e in emails if e and "@" in e}
    if not emails:
        return {}
    found = (
        User.objects.filter(profile__tenant=tenant, is_active=True)
        .annotate(email_lower=Lower("email"))
        .filter(email_lower__in=emails)
        .order_by("id")
    )
    users: dict = {}
    for user in found:
        users.setdefault(user.email_lower, user)
    return users


def user_login_candidates(*, ref: str, tenant: str = "") -> list:
    """The active users a login may mean: `ref` as a name or an e-mail in the tenant `tenant`
    (slug or name), or in every tenant when it is empty; or `ref` as a handle (an
    administrator without a tenant, `acme:alice`). The password decides between them."""
    ref = (ref or "").strip()
    if not ref:
        return []
    match = Q(profile__username=ref) | Q(email__iexact=ref) | Q(username=ref)
    users = User.objects.filter(match, is_active=True)
    tenant = (tenant or "").strip()
    if tenant:
        users = users.filter(
            Q(profile__tenant__slug=tenant.lower()) | Q(profile__tenant__name__iexact=tenant)
        )
    return list(users.order_by("id")[:20])


@transaction.atomic
def membership_sync_builtin(*, user, actor: str = "directory") -> None:
    """Make the user's built-in memberships (user:, tenant:, dept:, project:) match the profile.

    Called after every change to a profile's tenant, departments or projects (services and
    admin). Memberships that come from connectors (origin != builtin) are left alone.
    """
    _profile_name_sync(user=user)  # also heals a rename that bypassed the model
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
    name = user_name(user)
    key = personal_key(name)
    group = AccessGroup.objects.select_for_update().filter(tenant=tenant, key=key).first()
    if group is not None:
        _check_claim(group=group, user=user)
    for old in (
        _personal_groups_held(user=user, tenant=tenant).exclude(key=key).select_for_update(of=("self",))
    ):
        if group is not None:
            raise ApplicationError(
                f"user {name!r} holds both {old.key} and {key}; merge them by hand", status_code=409
            )
        group = _personal_key_move(group=old, key=key, user=user)
    return group or group_ensure(tenant=tenant, key=key, kind=AccessGroup.Kind.USER, name=name)


def personal_key_problem(*, user, username: str) -> str | None:
    """Why `user` (None: a new user) may not have the handle `username`: the personal key
    `user:<name>` of their tenant exists already and is not theirs (another user's, or
    left by a former one). None when the name is free. For forms, before anything is saved.
    A new user's tenant is the handle's prefix when it has one, else any tenant."""
    prefix, _, name = username.rpartition(":")
    if user is not None and user.pk:
        tenant_ids = list(UserProfile.objects.filter(user=user).values_list("tenant_id", flat=True))
    else:
        tenant_ids = list(Tenant.objects.filter(slug=prefix).values_list("pk", flat=True)) if prefix else []
    groups = AccessGroup.objects.filter(key=personal_key(name), kind=AccessGroup.Kind.USER)
    groups = groups.filter(tenant_id__in=tenant_ids) if tenant_ids else groups
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
    group.key, group.name = key, user_name(user)
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
    """After `user` was saved: if they were renamed (their handle changed), their name in
    the tenant follows, and so does their personal key (and every acl entry and scope key
    using it), in this transaction."""
    name = _profile_name_sync(user=user)
    if not _personal_groups_held(user=user).exclude(key=personal_key(name)).exists():
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
            tenant_id=profile.tenant_id, kind=AccessGroup.Kind.USER, key=personal_key(user_name(user))
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
    """Create or update the user `username` of `tenant` (idempotent on the tenant and the
    name; the same name in another tenant is another person)."""
    if not NAME_RE.match(username or ""):
        raise ApplicationError(f"invalid username {username!r}")
    profile = UserProfile.objects.select_related("user").filter(tenant=tenant, username=username).first()
    # A user of that handle with no tenant yet (`createsuperuser`, the admin) joins this one.
    if profile is not None and user_name(profile.user) != username:
        _profile_name_sync(user=profile.user)  # renamed behind the model's back: the name is free
        profile = None
    user = profile.user if profile else User.objects.filter(username=username, profile=None).first()
    if user is None:
        user = User(username=user_handle(tenant=tenant, name=username))
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
    profile, _ = UserProfile.objects.get_or_create(
        user=user, defaults={"tenant": tenant, "username": username}
    )
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
