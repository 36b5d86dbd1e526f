"""Governance of tenants, users, access groups, agent keys and the audit log. The scoping
that every app's admin shares is in `almanac.admin_mixins`."""

from __future__ import annotations

import csv
import datetime
import json

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from almanac.admin_actions import confirmation_page
from almanac.admin_audit import AuditedAdminMixin, audit_object_url
from almanac.admin_labels import field_labels_translate
from almanac.admin_mixins import (
    OwnRowsValuesFilter,
    ReadOnlyAdminMixin,
    SuperuserOnlyAdminMixin,
    TenantScopedAdminMixin,
)
from almanac.errors import ApplicationError
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
from almanac.services.keys import agentkey_create, agentkey_revoke
from almanac.services.tenancy import memberships_of
from almanac.services.users import (
    HANDLE_RE,
    membership_sync_builtin,
    personal_key_problem,
    user_name,
)

User = get_user_model()

admin.site.site_header = _("Almanac")
admin.site.site_title = _("Almanac")
admin.site.index_title = _("Administration")
field_labels_translate()  # every model is loaded when the admin is (almanac.admin_labels)


@admin.register(Tenant)
class TenantAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    tenant_field = "pk"
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(Department, Project)
class UnitAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
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
                raise ValidationError(
                    _("%(tenant)s already has a user called %(name)s") % {"tenant": tenant.slug, "name": name}
                )
        return cleaned


@admin.register(UserProfile)
class UserProfileAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
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
class AccessGroupAdmin(
    AuditedAdminMixin, MembershipDeletesAuditedMixin, TenantScopedAdminMixin, admin.ModelAdmin
):
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


class AgentKeyCreationForm(forms.ModelForm):
    """A key is made by `agentkey_create` while the form is validated (what it refuses, a
    name in use or a bad rate, is a form error); its secret is kept on the form, to be shown
    once by `AgentKeyAdmin.response_add` and never stored."""

    request = None  # set by AgentKeyAdmin.get_form

    class Meta:
        model = AgentKey
        fields = ["tenant", "name", "can_act_for_users", "can_push_events", "rate_limit"]

    def _post_clean(self):
        super()._post_clean()
        if self.errors:
            return
        data = self.cleaned_data
        try:
            self.written, self.secret = agentkey_create(
                tenant=data["tenant"],
                name=data["name"],
                can_act_for_users=data["can_act_for_users"],
                can_push_events=data["can_push_events"],
                rate_limit=data.get("rate_limit") or "",
                actor=self.request.user.get_username(),
            )
        except ApplicationError as exc:
            self.add_error(None, exc.message)


@admin.register(AgentKey)
class AgentKeyAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    """Keys are created here (the secret shown once) and revoked, never deleted: a revoked
    key stays listed with its last use, and the audit log's events keep naming it."""

    audit_kinds = ("change",)  # creation and revocation are audited by their services
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
    list_filter = ["tenant", "can_push_events", ("revoked_at", admin.EmptyFieldListFilter)]
    # The hash stays out of the form: with it, a guess at a key can be checked offline.
    exclude = ["hashed_secret"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = AgentKeyCreationForm
            kwargs["fields"] = AgentKeyCreationForm.Meta.fields
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"request": request}) if obj is None else form

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        obj.pk, obj.prefix = form.written.pk, form.written.prefix  # made by agentkey_create

    def response_add(self, request, obj, post_url_continue=None):
        form = getattr(request, "_almanac_key_form", None)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Agent key created"),
            "key": obj,
            "secret": form.secret if form is not None else "",
        }
        response = TemplateResponse(request, "admin/almanac/agentkey/created.html", context)
        response["Cache-Control"] = "no-store"  # the only time the secret is shown
        return response

    def save_form(self, request, form, change):
        if not change:
            request._almanac_key_form = form
        return super().save_form(request, form, change)

    def has_delete_permission(self, request, obj=None):
        return False  # revoked instead (see the class)

    @admin.action(description=_("Revoke selected keys"), permissions=["change"])
    def revoke(self, request, queryset):
        if request.POST.get("post") != "yes":
            return confirmation_page(
                self, request, queryset, action="revoke", title=_("Revoke agent keys"),
                question=_("Agents using these keys will be refused from now on. A revoked key "
                           "cannot be used again; create a new one instead."),
            )  # fmt: skip
        revoked = [key for key in queryset if agentkey_revoke(key=key, actor=request.user.get_username())]
        already = queryset.count() - len(revoked)
        message = ngettext("%(n)d key revoked", "%(n)d keys revoked", len(revoked)) % {"n": len(revoked)}
        if already:
            message += _("; %(n)d already revoked") % {"n": already}
        self.message_user(request, message)


class DateRangeFilter(admin.FieldListFilter):
    """From and to dates (inclusive), typed in: `<field>__gte` and `<field>__lt` the day after."""

    template = "admin/almanac/date_range_filter.html"

    def __init__(self, field, request, params, model, model_admin, field_path):
        self.since_param, self.until_param = f"{field_path}__since", f"{field_path}__until"
        super().__init__(field, request, params, model, model_admin, field_path)
        self.title = _("date range")
        self.request_params = request.GET
        self.since = self._date(self.used_parameters.get(self.since_param))
        self.until = self._date(self.used_parameters.get(self.until_param))

    @staticmethod
    def _date(values):
        value = values[-1] if isinstance(values, list) else values
        try:
            return datetime.date.fromisoformat(value) if value else None
        except ValueError:
            return None

    def expected_parameters(self):
        return [self.since_param, self.until_param]

    def has_output(self):
        return True

    def choices(self, changelist):
        return [{"since": self.since, "until": self.until, "field": self}]

    def queryset(self, request, queryset):
        if self.since:
            queryset = queryset.filter(**{f"{self.field_path}__date__gte": self.since})
        if self.until:
            queryset = queryset.filter(**{f"{self.field_path}__date__lte": self.until})
        return queryset


@admin.register(AuditEvent)
class AuditEventAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "tenant", "actor", "action", "object_type", "object_link"]
    list_filter = [
        ("created_at", DateRangeFilter),
        ("actor", OwnRowsValuesFilter),
        ("object_type", OwnRowsValuesFilter),
        "action",
        "tenant",
    ]
    search_fields = ["actor", "action", "object_id"]
    readonly_fields = [*(f.name for f in AuditEvent._meta.fields), "object_link"]
    list_select_related = ["tenant"]

    @admin.display(description=_("object"), ordering="object_id")
    def object_link(self, obj):
        url = audit_object_url(obj.object_type, obj.object_id)
        return format_html('<a href="{}">{}</a>', url, obj.object_id) if url else obj.object_id or "—"

    def get_urls(self):
        view = self.admin_site.admin_view(self.export_csv_view)
        return [path("export.csv", view, name="almanac_auditevent_export"), *super().get_urls()]

    def export_csv_view(self, request):
        """The list as filtered, as CSV (UTF-8 with a byte-order mark: Excel reads Chinese)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        changelist = self.get_changelist_instance(request)
        rows = changelist.get_queryset(request).order_by("created_at", "id")
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="audit.csv"'
        response.write("\ufeff")
        writer = csv.writer(response)
        writer.writerow(
            ["created_at", "tenant", "seq", "actor", "action", "object_type", "object_id", "detail"]
        )
        for event in rows.iterator(2000):
            writer.writerow([
                event.created_at.isoformat(), event.tenant.slug if event.tenant else "", event.seq, event.actor,
                event.action, event.object_type, event.object_id,
                json.dumps(event.detail, ensure_ascii=False, sort_keys=True),
            ])  # fmt: skip
        return response


HANDLE_HELP = _(
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
                _("Enter a name of letters, digits and @/./+/-/_, optionally after 'tenant:'.")
            )
        if self.instance.pk and username == self.instance.username:
            return username  # unchanged: nothing moves
        if User.objects.exclude(pk=self.instance.pk).filter(username__iexact=username).exists():
            raise ValidationError(_("A user with that username already exists."))
        tenant_id = (
            UserProfile.objects.filter(user_id=self.instance.pk).values_list("tenant", flat=True).first()
        )
        taken = UserProfile.objects.filter(tenant_id=tenant_id, username=username.rpartition(":")[2])
        if tenant_id is not None and taken.exclude(user_id=self.instance.pk).exists():
            raise ValidationError(_("Another user of this tenant already has that name."))
        problem = personal_key_problem(user=self.instance, username=username)
        if problem:
            raise ValidationError(problem)
        return username


class _UserChangeForm(_PersonalKeyCheck, UserChangeForm):
    pass


class _UserCreationForm(_PersonalKeyCheck, AdminUserCreationForm):
    pass


class TenantUserAdmin(AuditedAdminMixin, TenantScopedAdminMixin, UserAdmin):
    """Django's user admin, scoped like the rest: a staff user who is not a superuser sees
    and edits only the users of their own tenant (its autocompletes follow), never a
    superuser, and cannot grant admin rights (superuser, staff, groups, permissions): those
    stay with superusers, or the scoping could be undone from here."""

    tenant_field = "profile__tenant"
    form = _UserChangeForm
    add_form = _UserCreationForm
    list_display = ["username", "name_in_tenant", "tenant", "email", "is_staff"]
    list_select_related = ["profile__tenant"]
    search_fields = ["username", "profile__username", "email", "first_name", "last_name"]
    _GRANTS = ("is_superuser", "is_staff", "groups", "user_permissions")

    @admin.display(description=_("name in the tenant"), ordering="profile__username")
    def name_in_tenant(self, obj):
        return getattr(getattr(obj, "profile", None), "username", None) or "—"

    @admin.display(description=_("tenant"), ordering="profile__tenant__slug")
    def tenant(self, obj):
        return getattr(getattr(obj, "profile", None), "tenant", None) or "—"

    def get_queryset(self, request):
        # Not the other admins either: setting their password would be becoming them.
        return users_manageable(super().get_queryset(request), user=request.user)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return fields if sees_everything(request.user) else [*fields, *self._GRANTS]


admin.site.unregister(User)
admin.site.register(User, TenantUserAdmin)


class AuditedGroupAdmin(AuditedAdminMixin, GroupAdmin):
    """Django's permission groups: what a group grants is a grant too."""


admin.site.unregister(Group)
admin.site.register(Group, AuditedGroupAdmin)


def _superusers_only(app_label: str) -> None:
    for model, model_admin in list(admin.site._registry.items()):
        if model._meta.app_label == app_label:
            admin.site.unregister(model)
            admin.site.register(
                model, type(type(model_admin).__name__, (SuperuserOnlyAdminMixin, type(model_admin)), {})
            )


_superusers_only("django_q")
