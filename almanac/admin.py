from django.contrib import admin

from almanac import services
from almanac.models import (
    AccessGroup,
    AgentKey,
    AuditEvent,
    Department,
    GroupMembership,
    Project,
    Tenant,
    UserProfile,
)


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(Department, Project)
class UnitAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "tenant"]
    list_filter = ["tenant"]
    search_fields = ["name", "key"]


@admin.register(UserProfile)
class UserProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "tenant", "display_name", "title"]
    list_filter = ["tenant", "departments", "projects"]
    search_fields = ["user__username", "user__email", "display_name"]
    filter_horizontal = ["departments", "projects"]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # Built-in access groups follow the profile's departments and projects.
        services.membership_sync_builtin(user=form.instance.user)


class MembershipInline(admin.TabularInline):
    model = GroupMembership
    extra = 0
    raw_id_fields = ["user"]
    readonly_fields = ["confirmed_at", "created_at"]


@admin.register(AccessGroup)
class AccessGroupAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "name", "tenant", "builtin"]
    list_filter = ["tenant", "kind", "builtin"]
    search_fields = ["key", "name"]
    inlines = [MembershipInline]


@admin.register(GroupMembership)
class GroupMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "group", "origin", "confirmed_at"]
    list_filter = ["origin", "group__tenant", "group__kind"]
    search_fields = ["user__username", "group__key"]
    raw_id_fields = ["user", "group"]


@admin.register(AgentKey)
class AgentKeyAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "tenant",
        "prefix",
        "can_act_for_users",
        "can_push_events",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["tenant", "can_push_events"]
    readonly_fields = ["prefix", "hashed_secret", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False  # keys are created with `manage.py agentkey_create`, which shows the secret once

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        for key in queryset:
            services.agentkey_revoke(key=key)


class ReadOnlyAdminMixin:
    """For append-only tables: rows are read in the admin, never added, edited or deleted."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "tenant", "actor", "action", "object_type", "object_id"]
    list_filter = ["action", "tenant"]
    search_fields = ["actor", "action", "object_id"]
    readonly_fields = [f.name for f in AuditEvent._meta.fields]
