"""The context calls in the admin: the rows behind the dashboard's numbers (read-only)."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from almanac.admin_mixins import ReadOnlyAdminMixin, TenantScopedAdminMixin
from metrics.models import ContextCall


@admin.register(ContextCall)
class ContextCallAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "at",
        "user",
        "via",
        "agent_key",
        "task",
        "latency",
        "returned",
        "adopted",
        "repeats",
    ]
    list_filter = ["via", "at", "agent_key", "tenant"]
    search_fields = ["task", "user__username"]
    list_select_related = ["user", "agent_key"]
    date_hierarchy = "at"
    raw_id_fields = ["user", "session", "repeat_of"]

    @admin.display(description=_("latency (ms)"), ordering="latency_ms")
    def latency(self, obj):
        return f"{obj.latency_ms:,.0f}"

    @admin.display(description=_("repeats"), ordering="repeat_of")
    def repeats(self, obj):
        """The earlier call this one repeats, as a link to it."""
        if obj.repeat_of_id is None:
            return "—"
        url = reverse("admin:metrics_contextcall_change", args=[obj.repeat_of_id])
        return format_html('<a href="{}">#{}</a>', url, obj.repeat_of_id)

    @admin.display(description=_("returned"))
    def returned(self, obj):
        return len(obj.memory_ids) + len(obj.section_ids)

    @admin.display(description=_("adopted"))
    def adopted(self, obj):
        return len(obj.adopted_memory_ids) + len(obj.adopted_section_ids)
