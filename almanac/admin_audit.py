"""Every change made in the admin leaves an audit event (docs/operations.md, Audit log).

`AuditedAdminMixin` records `admin.add`, `admin.change` and `admin.delete` for an admin's
model: who, which object, and for a change what each field was and became (many-to-many
fields as what was added and removed: a user made staff with nine permissions is one
event naming the nine). Values of password fields and of the admin's
`audit_hidden_fields` are never written, only that they changed. Admins whose writes go
through a service that audits them already (memories, documents, agent keys' creation)
leave those out with `audit_kinds`.
"""

from __future__ import annotations

import datetime
import decimal
import json
from urllib.parse import urlencode

from django import forms
from django.contrib.auth.models import Permission
from django.core.exceptions import ObjectDoesNotExist
from django.db import models

from almanac.services.audit import audit_record

# Object types that services record under a short name; admin events use the same one, so
# the audit list filters them together. Others are named "<app>.<model>".
AUDIT_OBJECT_MODELS = {
    "user": "auth.user",
    "agent_key": "almanac.agentkey",
    "access_group": "almanac.accessgroup",
    "memory": "memories.memory",
    "wiki_entity": "wiki.entity",
    "wiki_page": "wiki.page",
    "page_section": "wiki.pagesection",
    "document": "documents.document",
    "source": "connectors.source",
}
_SHORT_NAMES = {label: short for short, label in AUDIT_OBJECT_MODELS.items()}
MAX_VALUE_CHARS = 500
HIDDEN = "(hidden)"


def audit_object_type(model) -> str:
    return _SHORT_NAMES.get(model._meta.label_lower, model._meta.label_lower)


def audit_value(value):
    """A field's value as the audit log keeps it: JSON, short, objects by name."""
    if isinstance(value, Permission):
        return f"{value.content_type.app_label}.{value.codename}"
    if isinstance(value, models.Model):
        return str(value)[:MAX_VALUE_CHARS]
    if isinstance(value, models.QuerySet | list | tuple | set):
        return sorted(str(audit_value(v)) for v in value)
    if isinstance(value, datetime.date | datetime.time | datetime.timedelta | decimal.Decimal):
        return str(value)
    if isinstance(value, str):
        return value[:MAX_VALUE_CHARS]
    if value is None or isinstance(value, bool | int | float):
        return value
    text = json.dumps(value, ensure_ascii=False, default=str)
    return json.loads(text) if len(text) <= MAX_VALUE_CHARS * 4 else text[:MAX_VALUE_CHARS]


def form_changes(form, hidden=()) -> dict:
    """{field: [before, after]} for the form's changed fields; many-to-many fields as
    {"added": [...], "removed": [...]}; hidden ones (passwords, `hidden`) as "(hidden)"."""
    changes = {}
    for name in form.changed_data:
        field = form.fields.get(name)
        # No field of that name: the password form reports its two fields as "password".
        secret = field is None or isinstance(field.widget, forms.PasswordInput) or "password" in name
        if secret or name in hidden:
            changes[name] = HIDDEN
            continue
        before = form.initial.get(name, field.initial)
        if isinstance(field, forms.ModelChoiceField) and not isinstance(before, models.Model | list):
            before = _instance(field, before)
        before = audit_value(before)
        after = audit_value(form.cleaned_data.get(name))
        if isinstance(field, forms.ModelMultipleChoiceField):
            before, after = set(before or []), set(after or [])
            changes[name] = {"added": sorted(after - before), "removed": sorted(before - after)}
        elif before != after:  # a JSON field's text can differ where its value does not
            changes[name] = [before, after]
    return changes


def _instance(field, pk):
    try:
        return field.to_python(pk)
    except forms.ValidationError:
        return pk


def audit_tenant_id(obj, path: str | None) -> int | None:
    """The tenant of `obj` along an admin's `tenant_field` path ("pk" for a tenant)."""
    if path is None:
        return getattr(obj, "tenant_id", None)
    if path == "pk":
        return obj.pk
    target = obj
    try:
        for part in path.split("__"):
            target = getattr(target, part)
    except ObjectDoesNotExist:
        return None
    return getattr(target, "pk", None)


class AuditedAdminMixin:
    """Records each add, change and delete made through this admin (see the module)."""

    audit_kinds = ("add", "change", "delete")
    audit_hidden_fields: tuple[str, ...] = ()

    def construct_change_message(self, request, form, formsets, add=False):
        # Called once the object (and its many-to-many fields) is saved, before log_*.
        request._almanac_audit_changes = form_changes(form, self.audit_hidden_fields)
        request._almanac_audit_inlines = [
            str(fs.model._meta.verbose_name_plural)
            for fs in formsets or []
            if fs.new_objects or fs.changed_objects or fs.deleted_objects
        ]
        return super().construct_change_message(request, form, formsets, add)

    def _audit(self, request, obj, kind: str, detail: dict) -> None:
        if kind not in self.audit_kinds:
            return
        audit_record(
            action=f"admin.{kind}",
            tenant_id=audit_tenant_id(obj, getattr(self, "tenant_field", None)),
            actor=request.user.get_username(),
            object_type=audit_object_type(self.model),
            object_id=obj.pk,
            detail={"object": str(obj)[:200], **detail},
        )

    def _form_detail(self, request) -> dict:
        detail = {"changes": getattr(request, "_almanac_audit_changes", {})}
        inlines = getattr(request, "_almanac_audit_inlines", [])
        return {**detail, "inlines": inlines} if inlines else detail

    def log_addition(self, request, obj, message):
        self._audit(request, obj, "add", self._form_detail(request))
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        detail = self._form_detail(request)
        if detail["changes"] or detail.get("inlines"):
            self._audit(request, obj, "change", detail)
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        for obj in queryset:
            self._audit(request, obj, "delete", {})
        return super().log_deletions(request, queryset)


def audit_object_url(object_type: str, object_id: str) -> str:
    """The admin page of an audit event's object: its change page when the id is its key,
    the list searched for it otherwise (an access group is named by its key); "" when the
    type has no admin page."""
    from django.apps import apps
    from django.contrib import admin
    from django.urls import NoReverseMatch, reverse

    label = AUDIT_OBJECT_MODELS.get(object_type, object_type)
    try:
        model = apps.get_model(label)
    except (LookupError, ValueError):
        return ""
    if not object_id or model not in admin.site._registry:
        return ""
    name = f"admin:{model._meta.app_label}_{model._meta.model_name}"
    try:
        if object_id.isdigit():
            return reverse(f"{name}_change", args=[object_id])
        return reverse(f"{name}_changelist") + "?" + urlencode({"q": object_id})
    except NoReverseMatch:
        return ""
