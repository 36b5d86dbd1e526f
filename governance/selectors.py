"""What the governance pages read. The user and the memories an admin may see are exactly
what the user admin and the memory admin show them (`get_queryset`, built on the access
filter and the tenant and department scoping of `almanac.admin_mixins`): one filter, never a
second query that could disagree with it."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.http import Http404
from django.utils.translation import gettext as _

from almanac.labels import group_label
from almanac.models import GroupMembership
from memories.models import ConversationSession, Memory
from metrics.models import ContextCall

User = get_user_model()
RECENT_CALLS = 20
SHOWN_MEMORIES = 200


def governed_users(request):
    """The users the requesting admin may govern: the user admin's rows for them."""
    return admin.site._registry[User].get_queryset(request)


def governed_memories(request):
    """The memories the requesting admin may see: the memory admin's rows for them."""
    return admin.site._registry[Memory].get_queryset(request)


def governed_user_get(request, *, user_id) -> User:
    """The user, if the requesting admin may govern them; Http404 otherwise (missing or not
    theirs: the page never says which)."""
    try:
        return governed_users(request).select_related("profile__tenant").get(pk=int(user_id))
    except (User.DoesNotExist, ValueError, TypeError) as exc:
        raise Http404("no such user") from exc


def user_own_memories(request, *, user):
    """The user's own memories (every status) that the admin may see."""
    return governed_memories(request).filter(owner=user).order_by("-updated_at", "-pk")


def user_hidden_memories_count(request, *, user) -> int:
    """How many of the user's own memories the admin may not see (private to them, or to
    groups the admin is not in): counted, never shown, so that "their memories (0)" does not
    read as "they have none"."""
    return Memory.objects.filter(owner=user).count() - user_own_memories(request, user=user).count()


def user_readable_memories(request, *, user):
    """Others' memories the user can read now by scope (the access filter, as their agents
    retrieve them), that the admin may see."""
    readable = Memory.objects.visible_to(user).values("pk")
    return (
        governed_memories(request).filter(pk__in=readable).exclude(owner=user).order_by("-updated_at", "-pk")
    )


@dataclass
class GroupRow:
    key: str
    label: str
    kind: str
    source: str  # where the membership comes from
    since: object


def _membership_source(membership: GroupMembership) -> str:
    group = membership.group
    if membership.origin == "builtin":
        return {
            group.Kind.TENANT: _("their tenant"),
            group.Kind.DEPARTMENT: _("their department"),
            group.Kind.PROJECT: _("their project"),
            group.Kind.USER: _("their personal key"),
        }.get(group.kind, _("built in"))
    if membership.origin == "admin":
        return _("added by an admin")
    return _("connector source %(source)s") % {"source": membership.origin}


def user_groups(*, user) -> list[GroupRow]:
    """The user's access groups in their tenant, each with where the membership comes from
    (their profile's tenant, department or project; an admin; a connector source)."""
    memberships = (
        GroupMembership.objects.filter(user=user, group__tenant__profiles__user=user)
        .select_related("group")
        .order_by("group__kind", "group__key")
    )
    return [
        GroupRow(
            key=m.group.key,
            label=group_label(key=m.group.key, kind=m.group.kind, name=m.group.name),
            kind=m.group.get_kind_display(),
            source=_membership_source(m),
            since=m.created_at,
        )
        for m in memberships
    ]


def user_context_calls(*, user, limit: int = RECENT_CALLS):
    """The latest context calls agents made on the user's behalf (metrics.ContextCall)."""
    return ContextCall.objects.filter(user=user).select_related("agent_key").order_by("-at")[:limit]


def user_sessions(*, user):
    return ConversationSession.objects.filter(user=user).order_by("-started_at")
