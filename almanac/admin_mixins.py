"""The admin scoping every app's admin shares (docs/design.md, Identity and access; Governance).

Staff users who are not superusers are scoped: `TenantScopedAdminMixin` keeps them to their
own tenant, and department admins (staff with an `AdminScope`) further to the rows of their
departments and projects (`UNIT_RULES`; a model without a rule is closed to them);
`ScopedHistoryAdminMixin` keeps simple-history's views to what the admin's `get_queryset`
(and, for versions, the access filter) lets them see; `SuperuserOnlyAdminMixin` is for what
belongs to the whole installation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path, unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import Http404

from almanac.models import (
    AdminScope,
    Tenant,
    UserProfile,
)
from almanac.permissions import governs_units_only, runs_installation, sees_everything
from almanac.selectors import acl_visible, user_tenant


def staff_tenant_id(request) -> int | None:
    """The tenant of the requesting user (their profile's), None if they have none.

    Looked up once per request: an admin page asks for it from several places.
    """
    if not hasattr(request, "_almanac_staff_tenant_id"):
        tenant = user_tenant(request.user)
        request._almanac_staff_tenant_id = tenant.pk if tenant else None
    return request._almanac_staff_tenant_id


@dataclass(frozen=True)
class UnitScope:
    """What a department admin governs: their departments and projects, those units' access
    group keys (`dept:…`, `project:…`) and the users who belong to one of them."""

    department_ids: frozenset[int]
    project_ids: frozenset[int]
    group_keys: tuple[str, ...]
    user_ids: frozenset[int]
    usernames: tuple[str, ...]


def _unit_scope_of(user) -> UnitScope | None:
    scope = AdminScope.objects.filter(user_id=user.pk).first()
    if scope is None or not governs_units_only(user):
        return None
    departments = list(scope.departments.all())
    projects = list(scope.projects.all())
    members = UserProfile.objects.filter(
        Q(departments__in=departments) | Q(projects__in=projects)
    ).values_list("user_id", "user__username")
    users = dict(members)
    return UnitScope(
        department_ids=frozenset(d.pk for d in departments),
        project_ids=frozenset(p.pk for p in projects),
        group_keys=tuple(sorted(u.group_key for u in [*departments, *projects])),
        user_ids=frozenset(users),
        usernames=tuple(sorted(users.values())),
    )


def staff_units(request) -> UnitScope | None:
    """The departments and projects a department admin governs; None for everyone else
    (superusers, and staff who govern their whole tenant). Looked up once per request."""
    if not hasattr(request, "_almanac_staff_units"):
        request._almanac_staff_units = _unit_scope_of(request.user)
    return request._almanac_staff_units


def _audit_in_units(scope: UnitScope) -> Q:
    """Audit entries about the scope: by or about its users, about its groups, about memories
    its users own."""
    user_ids = sorted(scope.user_ids)
    return (
        Q(actor__in=scope.usernames)
        | Q(object_type="user", object_id__in=[str(pk) for pk in user_ids])
        | Q(object_type="access_group", object_id__in=scope.group_keys)
        | Q(object_type="memory", detail__owner__in=user_ids)
    )


# Which rows of a model a department admin governs, by model label. A model not named here
# is closed to them (403): what they may govern is opted into, never out of.
UNIT_RULES: dict[str, Callable[[UnitScope], Q]] = {
    "auth.user": lambda s: Q(pk__in=s.user_ids),
    "almanac.userprofile": lambda s: Q(user_id__in=s.user_ids),
    "almanac.department": lambda s: Q(pk__in=s.department_ids),
    "almanac.project": lambda s: Q(pk__in=s.project_ids),
    "almanac.accessgroup": lambda s: Q(key__in=s.group_keys),
    "almanac.groupmembership": lambda s: Q(group__key__in=s.group_keys),
    "almanac.auditevent": _audit_in_units,
    "memories.memory": lambda s: Q(acl__overlap=list(s.group_keys)) | Q(owner_id__in=s.user_ids),
    "memories.conversationsession": lambda s: Q(user_id__in=s.user_ids),
    "connectors.source": lambda s: Q(departments__in=s.department_ids) | Q(projects__in=s.project_ids),
    "metrics.contextcall": lambda s: Q(user_id__in=s.user_ids),
}


def units_filter(request, queryset):
    """`queryset` held to a department admin's units (unchanged for anyone else; nothing
    for a model they may not govern)."""
    scope = staff_units(request)
    if scope is None:
        return queryset
    rule = UNIT_RULES.get(queryset.model._meta.label_lower)
    if rule is None:
        return queryset.none()
    matched = queryset.model._default_manager.filter(rule(scope)).values("pk")
    return queryset.filter(pk__in=matched)  # a rule across a to-many join: no duplicate rows


def unit_model_allowed(request, model) -> bool:
    """May the requesting staff user use `model`'s admin at all (False: a department admin
    and a model without a unit rule)?"""
    return staff_units(request) is None or model._meta.label_lower in UNIT_RULES


def tenant_choices(request, model):
    """The rows of `model` a scoped staff user may pick in a form (their tenant's; a
    department admin's units'), or None when there is nothing to restrict (a superuser, or
    a model not owned by a tenant)."""
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
    if model is not Tenant:
        qs = units_filter(request, qs)
    return qs if tenant_id is not None else qs.none()


def _choices_kept(form) -> dict[str, list]:
    """Per many-to-many field of `form`: the rows it held that its (scoped) choices do not
    offer. Saving the form would drop them: a department admin editing a person's
    departments must not remove them from a department outside their scope."""
    kept = {}
    for name, field in form.fields.items():
        if not isinstance(field, forms.ModelMultipleChoiceField) or name not in form.initial:
            continue
        held = [getattr(v, "pk", v) for v in form.initial[name] or []]
        offered = set(field.queryset.filter(pk__in=held).values_list("pk", flat=True))
        outside = [pk for pk in held if pk not in offered]
        if outside:
            kept[name] = list(field.queryset.model._default_manager.filter(pk__in=outside))
    return kept


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
        return (
            qs.none()
            if tenant_id is None
            else units_filter(request, qs.filter(**{self.tenant_field: tenant_id}))
        )

    # A department admin uses only the admins of models with a unit rule (UNIT_RULES).
    def has_module_permission(self, request):
        return unit_model_allowed(request, self.model) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return unit_model_allowed(request, self.model) and super().has_view_permission(request, obj)

    def has_add_permission(self, request, *args):
        return unit_model_allowed(request, self.model) and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return unit_model_allowed(request, self.model) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return unit_model_allowed(request, self.model) and super().has_delete_permission(request, obj)

    def save_related(self, request, form, formsets, change):
        kept = _choices_kept(form) if change and staff_units(request) is not None else {}
        super().save_related(request, form, formsets, change)
        for name, rows in kept.items():
            getattr(form.instance, name).add(*rows)

    def get_list_filter(self, request):
        list_filter = super().get_list_filter(request)
        if sees_everything(request.user):
            return list_filter
        return [_related_only(self.model, f) for f in list_filter]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        choices = tenant_choices(request, db_field.related_model)
        if choices is not None:
            kwargs["queryset"] = choices
            if db_field.related_model is Tenant and not db_field.null:
                kwargs.update(empty_label=None, initial=staff_tenant_id(request))  # theirs, chosen
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
