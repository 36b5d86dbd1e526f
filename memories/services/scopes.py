"""Scopes a memory is written to: which `(scope, scope_key)` a user may write, and the
departments and projects they belong to."""

from __future__ import annotations

from almanac.errors import ApplicationError
from almanac.models import Department, Project, UserProfile, key_part
from almanac.selectors import user_group_keys
from almanac.services.users import user_name
from memories.models import Memory

SCOPE_MODELS = {"dept": Department, "project": Project}


def user_units(*, user, scope: str) -> list:
    """The user's departments or projects, most recently joined first."""
    profile = UserProfile.objects.get(user=user)
    through = (UserProfile.departments if scope == "dept" else UserProfile.projects).through
    column = "department" if scope == "dept" else "project"
    rows = through.objects.filter(userprofile=profile).select_related(column).order_by("-id")
    return [getattr(r, column) for r in rows]


def scope_resolve(*, user, scope: str, scope_key: str | None) -> tuple[str, str]:
    """(scope, scope_key) for a memory `user` writes; the user must belong to that scope.

    dept/project accept the key or the display name; omitted → the user's most recent one.
    """
    profile = UserProfile.objects.select_related("tenant").filter(user=user).first()
    if profile is None:
        raise ApplicationError("user has no tenant", status_code=404)
    own = {Memory.Scope.USER: user_name(user), Memory.Scope.TENANT: profile.tenant.slug}
    if scope in own:
        # Only one key fits: another one is a mistake to report, not to silently replace.
        if scope_key and scope_key.strip().lower() not in {own[scope].lower(), key_part(own[scope])}:
            raise ApplicationError(
                f"scope {scope!r} is the {'acting user' if scope == Memory.Scope.USER else 'tenant'}'s own: "
                f"scope_key must be {own[scope]!r} or left out, not {scope_key!r}",
                status_code=422,
            )
        return scope, own[scope]
    if scope not in SCOPE_MODELS:
        raise ApplicationError(f"unknown scope {scope!r}", status_code=422)
    if not scope_key:
        mine = user_units(user=user, scope=scope)
        if not mine:
            raise ApplicationError(f"user belongs to no {scope}; give scope_key or use scope 'user'")
        return scope, mine[0].key
    model = SCOPE_MODELS[scope]
    unit = model.objects.filter(tenant=profile.tenant, key=key_part(scope_key)).first()
    unit = unit or model.objects.filter(tenant=profile.tenant, name__iexact=scope_key.strip()).first()
    if unit is None:
        raise ApplicationError(f"unknown {scope} {scope_key!r}")
    if unit.group_key not in user_group_keys(user):
        raise ApplicationError(f"user is not a member of {scope} {scope_key!r}", status_code=403)
    return scope, unit.key
