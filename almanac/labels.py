"""Access group keys in plain words, as a reader is told who can see something: "you",
"Sales department", "Apollo project", "everyone at Acme", "the thread's participants".

The keys are those of docs/design.md, Access (`tenant:`, `dept:`, `project:`, `user:` and
the sources' containers); the words come from the groups' names, in the reader's language.
Nothing here decides access: it only names keys a caller already holds (a row's `acl`,
the reader's own groups).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import gettext as _

from almanac.models import AccessGroup, UserProfile
from almanac.selectors import user_access
from almanac.services.users import personal_key, user_name

# A source container's members, by the key's first two parts (`email:thread:<id>`).
_SOURCE_PHRASES = {
    "email:thread": lambda name: _("the thread's participants"),
    "calendar:event": lambda name: _("the meeting's invitees"),
    "notes:meeting": lambda name: _("the meeting's participants"),
    "github:repo": lambda name: _("people with access to %(name)s") % {"name": name},
    "slack:channel": lambda name: _("members of %(name)s") % {"name": name},
}
# How labels are listed: the widest audience first, a person last.
_ORDER = {
    AccessGroup.Kind.TENANT: 0,
    AccessGroup.Kind.DEPARTMENT: 1,
    AccessGroup.Kind.PROJECT: 2,
    AccessGroup.Kind.SOURCE: 3,
    AccessGroup.Kind.USER: 4,
}


def key_kind(key: str) -> str:
    """The group kind a key's prefix says (`dept:sales` → "dept"; a source's → "source")."""
    prefix = key.partition(":")[0]
    kinds = {
        AccessGroup.Kind.TENANT,
        AccessGroup.Kind.DEPARTMENT,
        AccessGroup.Kind.PROJECT,
        AccessGroup.Kind.USER,
    }
    return prefix if prefix in kinds else AccessGroup.Kind.SOURCE


def group_label(*, key: str, kind: str, name: str, own: bool = False) -> str:
    """One key in plain words. `name`: the group's name (a department's, a channel's, a
    person's); `own`: the key is the reader's personal one ("you")."""
    name = name or key.partition(":")[2] or key
    if kind == AccessGroup.Kind.TENANT:
        return _("everyone at %(name)s") % {"name": name}
    if kind == AccessGroup.Kind.DEPARTMENT:
        return _("%(name)s department") % {"name": name}
    if kind == AccessGroup.Kind.PROJECT:
        return _("%(name)s project") % {"name": name}
    if kind == AccessGroup.Kind.USER:
        return _("you") if own else name
    phrase = _SOURCE_PHRASES.get(":".join(key.split(":")[:2]))
    return phrase(name) if phrase else _("members of %(name)s") % {"name": name}


def group_labels(*, user, keys: Iterable[str]) -> dict[str, str]:
    """{key: plain words} for `user` reading them, in the active language; two queries at
    most (the groups' names, and other people's display names for their `user:` keys). A
    key of another tenant, or none at all, is named from the key itself."""
    keys = sorted(set(keys))
    tenant_id, _groups = user_access(user)
    if not keys or tenant_id is None:
        return {}
    rows = AccessGroup.objects.filter(tenant_id=tenant_id, key__in=keys).values_list("key", "kind", "name")
    found = {key: (kind, name) for key, kind, name in rows}
    own = personal_key(user_name(user))
    people = [k.partition(":")[2] for k in keys if key_kind(k) == AccessGroup.Kind.USER and k != own]
    shown = (
        dict(
            UserProfile.objects.filter(tenant_id=tenant_id, username__in=people)
            .exclude(display_name="")
            .values_list("username", "display_name")
        )
        if people
        else {}
    )
    labels = {}
    for key in keys:
        kind, name = found.get(key, (key_kind(key), ""))
        if kind == AccessGroup.Kind.USER:
            name = shown.get(key.partition(":")[2], name)
        labels[key] = group_label(key=key, kind=kind, name=name, own=key == own)
    return labels


def labels_ordered(labels: dict[str, str], keys: Iterable[str]) -> list[str]:
    """The labels of `keys` (those `labels` names), widest audience first, each once."""
    known = [k for k in dict.fromkeys(keys) if k in labels]
    known.sort(key=lambda k: (_ORDER.get(key_kind(k), 9), labels[k]))
    return list(dict.fromkeys(labels[k] for k in known))


def acl_restricted(*, acl: Iterable[str], tenant_key: str) -> bool:
    """Whether a row is kept from part of the company: its ACL lacks the tenant's key."""
    return tenant_key not in set(acl)
