"""Governance of tenants, users, access groups, agent keys and the audit log. The scoping
that every app's admin shares is in `almanac.admin_mixins`."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.core.exceptions import ValidationError
from django.db.models import Q

from almanac.admin_mixins import ReadOnlyAdminMixin, SuperuserOnlyAdminMixin, TenantScopedAdminMixin
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
from almanac.permissions import sees_everything, users_manageable
from almanac.services.audit import access_audit
from almanac.services.keys import agentkey_revoke
from almanac.services.tenancy import memberships_of
from almanac.services.users import (
    HANDLE_RE,
    membership_sync_builtin,
    personal_key_problem,
    user_name,
)

User = get_user_model()


@admin.register(Tenant)
class TenantAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    tenant_field = "pk"
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(Department, Project)
class UnitAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "key", "tenant"]
    list_filter = ["tenant"]
    search_fields = ["name", "key"]


class _UserProfileForm(forms.ModelForm):
    """A profile's name is its user's (renamed with the user); in its tenant it must be free."""

    def clean(self):
        cleaned = super().clean()
        user, tenant = cleaned.get("user"), cleaned.get("tenant")
        if user is not None and tenant is not None:
            name = user_name(user)
            taken = UserProfile.objects.filter(tenant=tenant, username=name).exclude(pk=self.instance.pk)
            if taken.exists():
                raise ValidationError(f"{tenant.slug} already has a user called {name!r}")
        return cleaned


@admin.register(UserProfile)
class UserProfileAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    form = _UserProfileForm
    list_display = ["username", "tenant", "user", "display_name", "title"]
    list_filter = ["tenant", "departments", "projects"]
    search_fields = ["username", "user__username", "user__email", "display_name"]
    readonly_fields = ["username"]
    filter_horizontal = ["departments", "projects"]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # Built-in access groups follow the profile's departments and projects.
        membership_sync_builtin(user=form.instance.user, actor=request.user.get_username())


class MembershipInline(TenantScopedAdminMixin, admin.TabularInline):
    tenant_field = "group__tenant"
    model = GroupMembership
    extra = 0
    raw_id_fields = ["user"]
    readonly_fields = ["confirmed_at", "created_at"]


def _audited_membership_change(request, scope, change) -> None:
    """Run `change()` and record who joined and who left the memberships in `scope` (a
    queryset) as access events by the admin."""
    before = memberships_of(scope)
    known = AccessGroup.objects.in_bulk(list(before))  # a deleted group is still named in its events
    change()
    after = memberships_of(scope)
    actor = request.user.get_username()
    groups = before.keys() | after.keys()
    access_audit(
        changes={g: after.get(g, set()) - before.get(g, set()) for g in groups},
        granted=True,
        actor=actor,
        origin="admin",
    )
    access_audit(
        changes={g: before.get(g, set()) - after.get(g, set()) for g in groups},
        granted=False,
        actor=actor,
        groups=known,
    )


class MembershipDeletesAuditedMixin:
    """Deletes that take memberships with them (the rows themselves, or their groups' cascade)
    are recorded as `access.revoke` by the admin. `deleted_memberships`: the membership field
    that holds the deleted objects' ids (ids, not instances: a deleted instance has none)."""

    deleted_memberships = "pk"

    def _memberships(self, ids):
        return GroupMembership.objects.filter(**{f"{self.deleted_memberships}__in": list(ids)})

    def delete_model(self, request, obj):
        scope = self._memberships([obj.pk])
        _audited_membership_change(
            request, scope, lambda: super(MembershipDeletesAuditedMixin, self).delete_model(request, obj)
        )

    def delete_queryset(self, request, queryset):
        scope = self._memberships(queryset.values_list("pk", flat=True))
        _audited_membership_change(
            request,
            scope,
            lambda: super(MembershipDeletesAuditedMixin, self).delete_queryset(request, queryset),
        )


@admin.register(AccessGroup)
class AccessGroupAdmin(MembershipDeletesAuditedMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    deleted_memberships = "group_id"
    list_display = ["key", "kind", "name", "tenant", "builtin"]
    list_filter = ["tenant", "kind", "builtin"]
    search_fields = ["key", "name"]
    inlines = [MembershipInline]

    def save_formset(self, request, form, formset, change):
        if formset.model is not GroupMembership:
            return super().save_formset(request, form, formset, change)
        scope = GroupMembership.objects.filter(group=form.instance)
        _audited_membership_change(
            request, scope, lambda: super(AccessGroupAdmin, self).save_formset(request, form, formset, change)
        )


@admin.register(GroupMembership)
class GroupMembershipAdmin(MembershipDeletesAuditedMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    tenant_field = "group__tenant"
    list_display = ["user", "group", "origin", "confirmed_at"]
    list_filter = ["origin", "group__tenant", "group__kind"]
    search_fields = ["user__username", "group__key"]
    raw_id_fields = ["user", "group"]
    list_select_related = ["user", "group"]

    def save_model(self, request, obj, form, change):
        pairs = Q(user_id=obj.user_id, group_id=obj.group_id)
        if change:  # the row may have been moved to another user or group
            old = GroupMembership.objects.filter(pk=obj.pk).values("user_id", "group_id").first() or {}
            pairs |= Q(**old) if old else Q()
        scope = GroupMembership.objects.filter(pairs)
        _audited_membership_change(
            request, scope, lambda: super(GroupMembershipAdmin, self).save_model(request, obj, form, change)
        )


@admin.register(AgentKey)
class AgentKeyAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = [
        "name",
        "tenant",
        "prefix",
        "can_act_for_users",
        "can_push_events",
        "rate_limit",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["tenant", "can_push_events"]
    # The hash stays out of the form: with it, a guess at a key can be checked offline.
    exclude = ["hashed_secret"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False  # keys are created with `manage.py agentkey_create`, which shows the secret once

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        revoked = [key for key in queryset if agentkey_revoke(key=key, actor=request.user.get_username())]
        already = queryset.count() - len(revoked)
        self.message_user(
            request,
            f"{len(revoked)} key(s) revoked" + (f"; {already} already revoked" if already else ""),
        )


@admin.register(AuditEvent)
class AuditEventAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "tenant", "actor", "action", "object_type", "object_id"]
    list_filter = ["action", "tenant"]
    search_fields = ["actor", "action", "object_id"]
    readonly_fields = [f.name for f in AuditEvent._meta.fields]


HANDLE_HELP = (
    "The name in the tenant. When another tenant already has that name, prefix it with the "
    "tenant: acme:alice (the name is still alice)."
)


class _PersonalKeyCheck:
    """The username field holds the handle, `[<tenant>:]<name>` (almanac.services.users),
    checked here: Django's validator refuses the ":". A handle in use, a name its tenant
    already has, or a personal key that belongs to someone else is a form error, not a 500."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "username" in self.fields:
            self.fields["username"].help_text = HANDLE_HELP

    def _get_validation_exclusions(self):
        return {*super()._get_validation_exclusions(), "username"}  # checked in clean_username

    def clean_username(self):
        username = (self.cleaned_data.get("username") or "").strip()
        if not HANDLE_RE.match(username):
            raise ValidationError(
                "Enter a name of letters, digits and @/./+/-/_, optionally after 'tenant:'."
            )
        if self.instance.pk and username == self.instance.username:
            return username  # unchanged: nothing moves
        if User.objects.exclude(pk=self.instance.pk).filter(username__iexact=username).exists():
            raise ValidationError("A user with that username already exists.")
        tenant_id = (
            UserProfile.objects.filter(user_id=self.instance.pk).values_list("tenant", flat=True).first()
        )
        taken = UserProfile.objects.filter(tenant_id=tenant_id, username=username.rpartition(":")[2])
        if tenant_id is not None and taken.exclude(user_id=self.instance.pk).exists():
            raise ValidationError("Another user of this tenant already has that name.")
        problem = personal_key_problem(user=self.instance, username=username)
        if problem:
            raise ValidationError(problem)
        return username


class _UserChangeForm(_PersonalKeyCheck, UserChangeForm):
    pass


class _UserCreationForm(_PersonalKeyCheck, AdminUserCreationForm):
    pass


class TenantUserAdmin(TenantScopedAdminMixin, UserAdmin):
    """Django's user admin, scoped like the rest: a staff user who is not a superuser sees
    and edits only the users of their own tenant (its autocompletes follow), never a
    superuser, and cannot grant admin rights (superuser, staff, groups, permissions): those
    stay with superusers, or the scoping could be undone from here."""

    tenant_field = "profile__tenant"
    form = _UserChangeForm
    add_form = _UserCreationForm
    list_display = ["username", "profile__username", "profile__tenant", "email", "is_staff"]
    list_select_related = ["profile__tenant"]
    search_fields = ["username", "profile__username", "email", "first_name", "last_name"]
    _GRANTS = ("is_superuser", "is_staff", "groups", "user_permissions")

    def get_queryset(self, request):
        # Not the other admins either: setting their password would be becoming them.
        return users_manageable(super().get_queryset(request), user=request.user)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return fields if sees_everything(request.user) else [*fields, *self._GRANTS]


admin.site.unregister(User)
admin.site.register(User, TenantUserAdmin)


def _superusers_only(app_label: str) -> None:
    for model, model_admin in list(admin.site._registry.items()):
        if model._meta.app_label == app_label:
            admin.site.unregister(model)
            admin.site.register(
                model, type(type(model_admin).__name__, (SuperuserOnlyAdminMixin, type(model_admin)), {})
            )


_superusers_only("django_q")
