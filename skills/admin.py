"""Governance console for skills: contracts (with history) and every run (read-only).

Skills are global. Runs belong to a tenant: staff users who are not superusers see only
their tenant's runs, and not their input, output or error, which can carry any user's
private text (a run has no acl to check it against).
"""

from __future__ import annotations

import json

import jsonschema
from django import forms
from django.contrib import admin, messages
from django.db.models import CharField, F, Func, Q, Value
from django.urls import reverse
from django.utils.html import format_html
from simple_history.admin import SimpleHistoryAdmin

from almanac.admin_mixins import (
    HiddenFieldsAdminMixin,
    ScopedHistoryAdminMixin,
    SuperuserOnlyAdminMixin,
    TenantScopedAdminMixin,
)
from skills import bus
from skills.models import Skill, SkillRun
from skills.permissions import may_delete_runs, reads_run_contents
from skills.services import skill_sync_builtins


def _pretty(value) -> str:
    return format_html(
        "<pre style='white-space:pre-wrap;max-width:80em'>{}</pre>",
        json.dumps(value, ensure_ascii=False, indent=2),
    )


class SkillForm(forms.ModelForm):
    class Meta:
        model = Skill
        fields = [
            "name",
            "version",
            "description",
            "prompt",
            "input_schema",
            "output_schema",
            "events",
            "enabled",
        ]

    def clean_input_schema(self):
        return self._schema("input_schema")

    def clean_output_schema(self):
        return self._schema("output_schema")

    def _schema(self, field: str):
        value = self.cleaned_data.get(field) or {}
        try:
            jsonschema.Draft202012Validator.check_schema(value)
        except jsonschema.SchemaError as exc:
            raise forms.ValidationError(f"not a valid JSON schema: {exc.message}") from exc
        return value

    def clean_events(self):
        events = self.cleaned_data.get("events") or []
        if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
            raise forms.ValidationError('a JSON list of event names, e.g. ["document.uploaded"]')
        unknown = sorted(set(events) - set(bus.EVENTS))
        if unknown:
            raise forms.ValidationError(f"unknown events {unknown}; known: {list(bus.EVENTS)}")
        return events

    def clean(self):
        data = super().clean()
        if not (self.instance and self.instance.builtin) and not (data.get("prompt") or "").strip():
            self.add_error("prompt", "a prompt-only skill needs a prompt")
        return data


@admin.register(Skill)
class SkillAdmin(SuperuserOnlyAdminMixin, ScopedHistoryAdminMixin, SimpleHistoryAdmin):
    # The skills are the installation's: one tenant's staff disabling or rewriting
    # `summarize` would change every tenant's context calls.
    form = SkillForm
    list_display = ["name", "version", "builtin", "enabled", "events", "runs", "updated_at"]
    list_filter = ["builtin", "enabled"]
    search_fields = ["name", "description", "prompt"]
    actions = ["enable", "disable", "sync_builtins"]

    def get_readonly_fields(self, request, obj=None):
        # Built-in contracts come from code (synced on migrate); only `enabled` is an admin's.
        if obj is not None and obj.builtin:
            return [
                "name",
                "version",
                "description",
                "prompt",
                "input_schema",
                "output_schema",
                "events",
                "builtin",
            ]
        return ["builtin"]

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and not (obj and obj.builtin)

    @admin.display(description="runs")
    def runs(self, obj):
        url = reverse("admin:skills_skillrun_changelist") + f"?skill_name={obj.name}"
        return format_html('<a href="{}">runs</a>', url)

    @admin.action(description="Enable selected skills")
    def enable(self, request, queryset):
        self._set_enabled(request, queryset, True)

    @admin.action(description="Disable selected skills")
    def disable(self, request, queryset):
        self._set_enabled(request, queryset, False)

    def _set_enabled(self, request, queryset, value: bool):
        for skill in queryset.exclude(enabled=value):
            skill.enabled = value
            skill._change_reason = f"{'enabled' if value else 'disabled'} in admin"
            skill.save(update_fields=["enabled", "updated_at"])
        messages.success(request, f"{'Enabled' if value else 'Disabled'} {queryset.count()} skill(s).")

    @admin.action(description="Re-sync built-in skills from code")
    def sync_builtins(self, request, queryset):
        messages.success(request, f"Synced {len(skill_sync_builtins())} built-in skill(s).")


class TriggerKindFilter(admin.SimpleListFilter):
    """Triggers carry ids ("session:42", "event:session.ended"): filter by the part before ":"."""

    title = "trigger"
    parameter_name = "trigger_kind"

    def lookups(self, request, model_admin):
        kind = Func(F("trigger"), Value(":"), Value(1), function="split_part", output_field=CharField())
        runs = model_admin.get_queryset(request).order_by()
        kinds = runs.annotate(kind=kind).values_list("kind", flat=True).distinct().order_by("kind")
        return [(k, k) for k in kinds[:100]]

    def queryset(self, request, queryset):
        value = self.value()
        if not value:
            return queryset
        return queryset.filter(Q(trigger=value) | Q(trigger__startswith=f"{value}:"))


@admin.register(SkillRun)
class SkillRunAdmin(HiddenFieldsAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    hidden_fields = ("input", "output", "error")
    list_display = [
        "id",
        "created_at",
        "skill_name",
        "version",
        "status",
        "used_llm",
        "attempts",
        "duration_ms",
        "trigger",
        "tenant",
    ]
    list_filter = ["status", "skill_name", TriggerKindFilter, "used_llm", "tenant", "created_at"]
    search_fields = ["skill_name", "trigger", "input_digest", "error", "event_key"]
    date_hierarchy = "created_at"
    list_select_related = ["tenant"]
    list_per_page = 100
    fields = [
        "skill_name",
        "version",
        "status",
        "used_llm",
        "attempts",
        "duration_ms",
        "trigger",
        "tenant",
        "created_at",
        "event_key",
        "input_digest",
        "input_truncated",
        "error",
        "input_pretty",
        "output_pretty",
    ]
    readonly_fields = fields
    content_fields = ["error", "input_pretty", "output_pretty"]

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return (
            fields
            if reads_run_contents(request.user)
            else [f for f in fields if f not in self.content_fields]
        )

    def get_search_fields(self, request):
        fields = super().get_search_fields(request)
        return (
            fields
            if reads_run_contents(request.user)
            else [f for f in fields if f not in self.content_fields]
        )

    @admin.display(description="input")
    def input_pretty(self, obj):
        return _pretty(obj.input)

    @admin.display(description="output")
    def output_pretty(self, obj):
        return _pretty(obj.output)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return may_delete_runs(request.user)
