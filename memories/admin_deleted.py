"""Deleted memories in the admin: the list of those a governor may still bring back
(deleted within MEMORY_RESTORE_DAYS, not purged) with a Restore button each, and a deleted
memory's history page offering Restore instead of a "Revert" that can only fail (the row
is gone: `memories.services.deleted.memory_restore_deleted` brings it back)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext as _t
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from almanac.admin_mixins import UNIT_RULES, staff_tenant_id, staff_units
from almanac.errors import ApplicationError
from almanac.permissions import sees_everything
from almanac.selectors import acl_visible
from memories.models import Memory
from memories.services.deleted import memory_restore_deleted
from memories.services.rows import PURGED


def deleted_memories(request):
    """The delete rows of memories gone now, deleted within MEMORY_RESTORE_DAYS and not
    purged: the admin's tenant's (and, for staff, what the access filter lets them read; for
    a department admin, only those of their scope, as the memory list holds them)."""
    since = timezone.now() - timedelta(days=settings.MEMORY_RESTORE_DAYS)
    rows = (
        Memory.history.filter(history_type="-", history_date__gte=since)
        .exclude(content=PURGED)
        .exclude(id__in=Memory.objects.values("id"))
        .select_related("history_user", "owner")
        .order_by("-history_date")
    )
    if not sees_everything(request.user):
        rows = acl_visible(rows.filter(tenant_id=staff_tenant_id(request)), request.user)
        scope = staff_units(request)
        if scope is not None:  # history rows hold the memory's acl and owner: the same rule
            rows = rows.filter(UNIT_RULES["memories.memory"](scope))
    return rows


class DeletedMemoriesAdminMixin:
    """For MemoryAdmin (see the module)."""

    object_history_template = "admin/memories/memory/object_history.html"

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("deleted/", wrap(self.deleted_view), name="memories_memory_deleted"),
            path("deleted/<int:memory_id>/restore/", wrap(require_POST(self.restore_deleted_view)),
                 name="memories_memory_restore_deleted"),
            *super().get_urls(),
        ]  # fmt: skip

    def revert_disabled(self, request, obj=None):
        # A deleted memory's row is gone: reverting it would save a row outside the services.
        if obj is not None and not Memory.objects.filter(pk=obj.pk).exists():
            return True
        return super().revert_disabled(request, obj)

    def history_view(self, request, object_id, extra_context=None):
        restorable = deleted_memories(request).filter(id=object_id).exists() if object_id.isdigit() else False
        return super().history_view(request, object_id, {**(extra_context or {}), "restorable": restorable})

    def deleted_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Deleted memories"),
            "rows": list(deleted_memories(request)[:200]),
            "days": settings.MEMORY_RESTORE_DAYS,
        }
        return TemplateResponse(request, "admin/memories/memory/deleted.html", context)

    def restore_deleted_view(self, request, memory_id: int):
        if staff_units(request) is not None and not deleted_memories(request).filter(id=memory_id).exists():
            # A department admin restores only what their scope holds (the list above).
            self.message_user(request, _t("memory not found"), messages.ERROR)
            return HttpResponseRedirect(reverse("admin:memories_memory_deleted"))
        try:
            memory = memory_restore_deleted(user=request.user, memory_id=memory_id, reason="admin:restore")
        except (ApplicationError, Http404) as exc:
            self.message_user(
                request, getattr(exc, "message", None) or _t("memory not found"), messages.ERROR
            )
            return HttpResponseRedirect(reverse("admin:memories_memory_deleted"))
        self.message_user(request, _t("Memory %(id)s restored.") % {"id": memory.pk}, messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:memories_memory_change", args=[memory.pk]))
