"""The lifecycle settings and the department admins in the admin (docs/operations.md, Roles;
Memory lifecycle). The per-user governance page is `governance.views`."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from almanac.admin_audit import AuditedAdminMixin
from almanac.admin_mixins import SuperuserOnlyAdminMixin, TenantScopedAdminMixin
from almanac.models import AdminScope
from governance.permissions import may_run_lifecycle
from governance.selectors import governed_memories
from governance.services.lifecycle import lifecycle_preview, lifecycle_run
from memories.models import LifecycleSettings
from memories.services.lifecycle import lifecycle_for


@admin.register(LifecycleSettings)
class LifecycleSettingsAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = ["tenant", "decay_after_days", "decay_below_importance", "compress_min",
                    "compressed_keep_days", "in_effect"]  # fmt: skip
    change_form_template = "admin/governance/lifecycle_change_form.html"

    @admin.display(description=gettext_lazy("in effect"))
    def in_effect(self, obj) -> str:
        lc = lifecycle_for(obj.tenant_id)
        return _("decay: %(days)s days, importance < %(imp)s; compress above %(min)s; keep %(keep)s days") % {
            "days": lc.decay_after_days,
            "imp": lc.decay_below_importance,
            "min": lc.compress_min,
            "keep": lc.compressed_keep_days,
        }

    def get_urls(self):
        return [
            path(
                "<int:object_id>/preview/",
                self.admin_site.admin_view(self.preview_view),
                name="lifecycle_preview",
            ),
            path("<int:object_id>/run/", self.admin_site.admin_view(self.run_view), name="lifecycle_run"),
            *super().get_urls(),
        ]

    def _settings(self, request, object_id) -> LifecycleSettings:
        if not may_run_lifecycle(request.user):
            raise PermissionDenied
        obj = self.get_object(request, str(object_id))
        if obj is None:
            raise Http404("no such settings")
        return obj

    def preview_view(self, request, object_id):
        """What decay and compression would do now under these settings; writes nothing."""
        obj = self._settings(request, object_id)
        preview = lifecycle_preview(tenant_id=obj.tenant_id)
        ids = [m.pk for m in preview.decay] + [m.pk for g in preview.groups for m in g.memories]
        ids += [m.pk for m, _held in preview.expiring]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": obj,
            "title": _("Lifecycle preview: %(tenant)s") % {"tenant": obj.tenant},
            "preview": preview,
            # Text only of memories the admin may read (the memory admin's own filter).
            "readable": set(governed_memories(request).filter(pk__in=ids).values_list("pk", flat=True)),
        }
        return TemplateResponse(request, "admin/governance/lifecycle_preview.html", context)

    def run_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        obj = self._settings(request, object_id)
        lifecycle_run(tenant_id=obj.tenant_id, actor=request.user.get_username())
        self.message_user(
            request,
            _("Decay and compression of %(tenant)s queued.") % {"tenant": obj.tenant},
            messages.SUCCESS,
        )
        return redirect("admin:memories_lifecyclesettings_change", obj.pk)


@admin.register(AdminScope)
class AdminScopeAdmin(AuditedAdminMixin, SuperuserOnlyAdminMixin, admin.ModelAdmin):
    """Who is a department admin of what: set by superusers (a tenant's staff cannot grant
    admin rights, nor widen their own scope)."""

    tenant_field = "user__profile__tenant"  # where its audit events are chained

    list_display = ["user", "units"]
    filter_horizontal = ["departments", "projects"]
    raw_id_fields = ["user"]

    @admin.display(description=gettext_lazy("departments and projects"))
    def units(self, obj) -> str:
        return ", ".join([*(d.name for d in obj.departments.all()), *(p.name for p in obj.projects.all())])
