"""The per-user governance page (docs/operations.md, Roles): what the system holds about a
person, as the requesting admin may see it, with export and purge. Served under the admin
(`admin.site.admin_view`: staff only, the admin's login)."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _

from governance.permissions import may_govern_users, may_purge_user_data, may_read_sessions
from governance.selectors import (
    SHOWN_MEMORIES,
    governed_user_get,
    user_context_calls,
    user_groups,
    user_hidden_memories_count,
    user_own_memories,
    user_readable_memories,
    user_sessions,
)
from governance.services.users import user_export, user_export_csv, user_purge


def _governed(request, user_id):
    if not may_govern_users(request.user):
        raise PermissionDenied
    return governed_user_get(request, user_id=user_id)


def _context(request, user, **extra) -> dict:
    return {
        **admin.site.each_context(request),
        "title": _("Governance: %(user)s") % {"user": user.username},
        "subject": user,
        **extra,
    }


def user_page(request, user_id):
    user = _governed(request, user_id)
    own = user_own_memories(request, user=user).defer("embedding")
    readable = user_readable_memories(request, user=user).defer("embedding").select_related("owner")
    context = _context(
        request,
        user,
        groups=user_groups(user=user),
        own=own[:SHOWN_MEMORIES],
        own_total=own.count(),
        own_hidden=user_hidden_memories_count(request, user=user),
        readable=readable[:SHOWN_MEMORIES],
        readable_total=readable.count(),
        calls=user_context_calls(user=user),
        sessions=user_sessions(user=user) if may_read_sessions(request.user) else None,
        may_purge=may_purge_user_data(request.user),
        memory_list=reverse("admin:memories_memory_changelist") + f"?owner__id__exact={user.pk}",
    )
    return TemplateResponse(request, "admin/governance/user.html", context)


def user_export_view(request, user_id, fmt):
    if request.method != "POST":  # audited: not a link a page elsewhere could make a browser follow
        return HttpResponseNotAllowed(["POST"])
    user = _governed(request, user_id)
    data = user_export(request, user=user, fmt=fmt)
    if fmt == "csv":
        response = HttpResponse(user_export_csv(data), content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse(
            json.dumps(data, ensure_ascii=False, indent=2), content_type="application/json"
        )
    response["Content-Disposition"] = f'attachment; filename="user-{user.pk}.{fmt}"'
    return response


def user_purge_view(request, user_id):
    user = _governed(request, user_id)
    if not may_purge_user_data(request.user):
        raise PermissionDenied
    if request.method == "POST" and request.POST.get("post") == "yes":
        counts = user_purge(request, user=user)
        message = _("Purged %(memories)s memories and %(calls)s agent call records of %(user)s.") % {
            "memories": counts["memories"],
            "calls": counts["context_calls"],
            "user": user.username,
        }
        messages.success(request, message)
        if counts["refused"]:
            messages.error(request, _("%(n)s memories could not be purged.") % {"n": counts["refused"]})
        return redirect("governance:user", user_id=user.pk)
    own = user_own_memories(request, user=user)
    context = _context(
        request,
        user,
        title=_("Purge everything about %(user)s?") % {"user": user.username},
        own_total=own.count(),
        calls_total=user_context_calls(user=user, limit=None).count(),
        sessions=user_sessions(user=user).count() if may_read_sessions(request.user) else None,
    )
    return TemplateResponse(request, "admin/governance/user_purge.html", context)
