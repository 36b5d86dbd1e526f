"""The admin scoping every app's admin shares (docs/design.md, Identity and access; Governance).

Staff users who are not superusers are scoped: `TenantScopedAdminMixin` keeps them to their
own tenant, `ScopedHistoryAdminMixin` keeps simple-history's views to what the admin's
`get_queryset` (and, for versions, the access filter) lets them see; `SuperuserOnlyAdminMixin`
is for what belongs to the whole installation.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path, unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http import Http404

from almanac.models import (
    Tenant,
)
from almanac.permissions import runs_installation, sees_everything
from almanac.selectors import acl_visible, user_tenant


def staff_tenant_id(request) -> int | None:
    """The tenant of the requesting user (their profile's), None if they have none.

    Looked up once per request: an admin page asks for it from several places.
    """
    if not hasattr(request, "_almanac_staff_tenant_id"):
        tenant = user_tenant(request.user)
        request._almanac_staff_tenant_id = tenant.pk if tenant else None
    return request._almanac_staff_tenant_id


def tenant_choices(request, model):
    """The rows of `model` a scoped staff user may pick in a form (their tenant's), or None
    when there is nothing to restrict (a superuser, or a model not owned by a tenant)."""
    if sees_everything(request.user):
        return None
    tenant_id = staff_tenant_id(request)
    if model is Tenant:
        qs = Tenant.objects.filter(pk=tenant_id)
    elif model is get_user_model():
        qs = model._default_manager.filter(profile__tenant_id=tenant_id)
    elif any(f.name == "tenant" and f.is_relation for f in model._meta.get_fields()):
        qs = model._default_manager.filter(tenant_id=tenant_id)
    else:
        return None
    return qs if tenant_id is not None else qs.none()


class OwnRowsValuesFilter(admin.AllValuesFieldListFilter):
    """Values of a field across a relation (`source__name`) as the admin's own rows hold
    them: Django's filter reads the related table whole (every tenant's source names)."""

    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        self.lookup_choices = (
            model_admin.get_queryset(request)
            .order_by(field_path)
            .values_list(field_path, flat=True)
            .distinct()
        )


def _related_only(model, list_filter):
    """A related-field filter offers every row of the related table (every tenant's name);
    RelatedOnlyFieldListFilter offers only those the admin's own rows point to, and
    OwnRowsValuesFilter only the values they hold."""
    if not isinstance(list_filter, str):
        return list_filter
    fields = get_fields_from_path(model, list_filter)
    if fields[-1].is_relation:
        return (list_filter, admin.RelatedOnlyFieldListFilter)
    if len(fields) > 1:
        return (list_filter, OwnRowsValuesFilter)
    return list_filter


class HiddenFieldsAdminMixin:
    """Fields hidden from staff who are not superusers (`hidden_fields`, model field names)
    can't be filtered or searched on by them either: Django's changelist takes a lookup on
    any of the model's own fields from the URL (`?input__icontains=salary`), which would
    answer yes or no about text they may not read."""

    hidden_fields: tuple[str, ...] = ()

    def lookup_allowed(self, lookup, value, request=None):
        if (
            request is not None
            and not sees_everything(request.user)
            and lookup.split("__")[0] in self.hidden_fields
        ):
            return False
        return super().lookup_allowed(lookup, value, request)

    def get_search_fields(self, request):
        fields = super().get_search_fields(request)
        if sees_everything(request.user):
            return fields
        return [f for f in fields if f.lstrip("^=@").split("__")[0] not in self.hidden_fields]


class TenantScopedAdminMixin:
    """Staff users who are not superusers read and write only rows of their own tenant.

    `tenant_field`: the path from the model to its tenant. Rows of no tenant, and every row
    for a staff user without a profile, are hidden (fail closed). Related-field list filters
    offer only values found in the visible rows, and foreign keys accept only the staff
    user's tenant, its users and its rows (no memory planted for another tenant's user).
    Superusers see and choose everything.
    """

    tenant_field = "tenant"

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if sees_everything(request.user):
            return qs
        tenant_id = staff_tenant_id(request)
        return qs.none() if tenant_id is None else qs.filter(**{self.tenant_field: tenant_id})

    def get_list_filter(self, request):
        list_filter = super().get_list_filter(request)
        if sees_everything(request.user):
            return list_filter
        return [_related_only(self.model, f) for f in list_filter]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        choices = tenant_choices(request, db_field.related_model)
        if choices is not None:
            kwargs["queryset"] = choices
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        choices = tenant_choices(request, db_field.related_model)
        if choices is not None:
            kwargs["queryset"] = choices
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class ScopedHistoryAdminMixin:
    """simple-history's views, held to the admin's `get_queryset` (for every SimpleHistoryAdmin).

    simple-history 3.13 shows the last version of an object outside `get_queryset` in
    `history_view`, and `history_form_view` shows and saves (reverts) any version without
    looking: for such an object both now answer like Django's change view (a redirect to
    the admin index with a message).

    `history_acl = True` (models whose history keeps `tenant` and `acl`): staff users who are
    not superusers see only the versions the access filter lets them read, so a memory made
    public does not show what it said while private. `get_history_hidden_fields` names
    fields left out of the change lists of the history page.
    """

    history_acl = False

    def get_history_hidden_fields(self, request) -> list[str]:
        return []

    def _outside_queryset(self, request, object_id, *, writing: bool = False) -> bool:
        # Superusers keep simple-history's view of deleted objects; reverting one is saving
        # a row that is gone (outside the services): create it anew instead.
        if sees_everything(request.user) and not writing:
            return False
        return self.get_object(request, unquote(object_id)) is None

    def history_view(self, request, object_id, extra_context=None):
        if self._outside_queryset(request, object_id):
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        return super().history_view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        if self._outside_queryset(request, object_id, writing=request.method == "POST"):
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        history = getattr(self.model, self.opts.simple_history_manager_attribute)
        versions = self.get_history_queryset(request, history, self.opts.pk.attname, unquote(object_id))
        try:
            visible = versions.filter(history_id=version_id).exists()
        except (ValueError, ValidationError):
            visible = False
        if not visible:
            raise Http404("version not found")
        return super().history_form_view(request, object_id, version_id, extra_context)

    def get_history_queryset(self, request, history_manager, pk_name, object_id):
        qs = super().get_history_queryset(request, history_manager, pk_name, object_id)
        if self.history_acl and not sees_everything(request.user):
            qs = acl_visible(qs, request.user)
        return qs

    def set_history_delta_changes(self, request, historical_records, foreign_keys_are_objs=True):
        hidden = self.get_history_hidden_fields(request)
        if not hidden:
            return super().set_history_delta_changes(request, historical_records, foreign_keys_are_objs)
        # simple-history's own loop, with the hidden fields left out of each diff.
        previous = None
        for current in historical_records:
            if previous is not None:
                delta = previous.diff_against(
                    current, excluded_fields=hidden, foreign_keys_are_objs=foreign_keys_are_objs
                )
                helper = self.get_historical_record_context_helper(request, previous)
                previous.history_delta_changes = helper.context_for_delta_changes(delta)
            previous = current


class ReadOnlyAdminMixin:
    """For append-only tables: rows are read in the admin, never added, edited or deleted."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class SuperuserOnlyAdminMixin:
    """What belongs to the whole installation, not a tenant: the task queue (django-q2's
    schedules, results, failures and queue; a schedule names any Python function to run on
    the workers) and the skills every tenant runs. Superusers only, whatever model
    permissions staff were given."""

    # Superusers only, and then only what the admin itself allows (django-q2 offers no
    # "add" for task results: forcing it open gave a 500).
    def has_module_permission(self, request):
        return runs_installation(request.user) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return runs_installation(request.user) and super().has_view_permission(request, obj)

    def has_add_permission(self, request, *args):
        return runs_installation(request.user) and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return runs_installation(request.user) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return runs_installation(request.user) and super().has_delete_permission(request, obj)
