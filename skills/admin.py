"""Governance console for skills: contracts (with history) and every run (read-only).

Skills are global. Runs belong to a tenant: staff users who are not superusers see only
their tenant's runs, and not their input, output or error, which can carry any user's
private text (a run has no acl to check it against).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import jsonschema
from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import CharField, F, Func, Q, Value
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _t
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from almanac.admin_audit import AuditedAdminMixin
from almanac.admin_mixins import (
    HiddenFieldsAdminMixin,
    ScopedHistoryAdminMixin,
    SuperuserOnlyAdminMixin,
    TenantScopedAdminMixin,
)
from almanac.services.audit import audit_record
from skills import bus, prompt_skill
from skills.models import Skill, SkillRun
from skills.permissions import may_delete_runs, may_test_run, reads_run_contents
from skills.selectors import skill_run_stats
from skills.services import skill_sync_builtins
from skills.trial import skill_test_run

OUTPUT_FIELDS = [
    "output_to",
    "output_field",
    "output_scope",
    "output_kind",
    "output_memory_type",
    "output_page",
]


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
            *OUTPUT_FIELDS,
        ]
        widgets = {
            "output_kind": forms.Select(choices=[("", "—"), *((k, k) for k in prompt_skill.MEMORY_KINDS)]),
            "output_memory_type": forms.Select(choices=[(t, t) for t in prompt_skill.MEMORY_TYPES]),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, default in (("output_to", Skill.OutputTo.NONE), ("output_memory_type", "semantic")):
            if name in self.fields:  # left out: the default (no destination, semantic memories)
                self.fields[name].required = False
                self.fields[name].initial = default

    def clean_output_to(self):
        return self.cleaned_data.get("output_to") or Skill.OutputTo.NONE

    def clean_output_memory_type(self):
        return self.cleaned_data.get("output_memory_type") or "semantic"

    def clean_input_schema(self):
        return self._schema("input_schema")

    def clean_output_schema(self):
        return self._schema("output_schema")

    def _schema(self, field: str):
        value = self.cleaned_data.get(field) or {}
        try:
            jsonschema.Draft202012Validator.check_schema(value)
        except jsonschema.SchemaError as exc:
            raise forms.ValidationError(
                _("not a valid JSON schema: %(error)s") % {"error": exc.message}
            ) from exc
        return value

    def clean_events(self):
        events = self.cleaned_data.get("events") or []
        if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
            raise forms.ValidationError(_('a JSON list of event names, e.g. ["document.uploaded"]'))
        unknown = sorted(set(events) - set(bus.EVENTS))
        if unknown:
            raise forms.ValidationError(
                _("unknown events %(unknown)s; known: %(known)s")
                % {"unknown": unknown, "known": list(bus.EVENTS)}
            )
        return events

    def clean_output_scope(self):
        value = (self.cleaned_data.get("output_scope") or "").strip()
        if prompt_skill.scope_parse(value) is None:
            raise forms.ValidationError(
                _("empty (the event's scope), user, tenant, dept:<key> or project:<key>")
            )
        return value

    def clean(self):
        data = super().clean()
        if not (self.instance and self.instance.builtin) and not (data.get("prompt") or "").strip():
            self.add_error("prompt", _("a prompt-only skill needs a prompt"))
        if data.get("output_to", Skill.OutputTo.NONE) != Skill.OutputTo.NONE:
            self._check_output(data)
        return data

    def _check_output(self, data: dict) -> None:
        """A destination needs the output field it keeps, declared as text (or a list of
        texts) by the output schema; a page section, a page (configured or an output field)."""
        properties = (data.get("output_schema") or {}).get("properties") or {}
        name = (data.get("output_field") or "").strip()
        declared = properties.get(name) if isinstance(properties, dict) else None
        if not name:
            self.add_error("output_field", _("name the output field whose text is kept"))
        elif not isinstance(declared, dict) or declared.get("type") not in ("string", "array"):
            self.add_error(
                "output_field",
                _("the output schema must declare this field as a string or an array of strings"),
            )
        page_declared = (
            isinstance(properties, dict) and (properties.get("page") or {}).get("type") == "string"
        )
        page_given = bool((data.get("output_page") or "").strip())
        if data.get("output_to") == Skill.OutputTo.SECTION and not (page_given or page_declared):
            self.add_error(
                "output_page", _('give the page title, or declare a string field "page" in the output schema')
            )


class TestRunForm(forms.Form):
    input = forms.JSONField(
        label=_("Sample input (JSON)"),
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 12, "cols": 80}),
        help_text=_('As an event\'s payload would be, e.g. {"text": "…", "user_id": 1, "scope": "user"}.'),
    )

    def clean_input(self):
        value = self.cleaned_data.get("input")
        if not isinstance(value, dict):
            raise forms.ValidationError(_("a JSON object"))
        return value


@admin.register(Skill)
class SkillAdmin(AuditedAdminMixin, SuperuserOnlyAdminMixin, ScopedHistoryAdminMixin, SimpleHistoryAdmin):
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
                *OUTPUT_FIELDS,
                "run_stats",
            ]
        return ["builtin", "run_stats", "test_run"] if obj is not None else ["builtin"]

    def get_fields(self, request, obj=None):
        fields = [f for f in super().get_fields(request, obj) if f not in ("run_stats", "test_run")]
        if obj is None:
            return fields
        return [*fields, "run_stats"] + ([] if obj.builtin else ["test_run"])

    @admin.display(description=_("runs"))
    def run_stats(self, obj):
        """Runs by trigger (each a link to those runs), the failure rate and the last error."""
        stats = skill_run_stats(obj.name)
        runs_url = reverse("admin:skills_skillrun_changelist")
        rows = format_html_join(
            "",
            '<tr><td><a href="{}?{}">{}</a></td><td>{}</td><td>{}</td></tr>',
            (
                (runs_url, urlencode({"skill_name": obj.name, "trigger_kind": r["trigger"]}), r["trigger"])
                + (r["runs"], r["failed"])
                for r in stats["by_trigger"]
            ),
        )
        rate = "—" if stats["failure_rate"] is None else f"{stats['failure_rate']:.0%}"
        last = stats["last_error"]
        error = "—"
        if last is not None:
            error = format_html(
                '<a href="{}">#{}</a> {} {}',
                reverse("admin:skills_skillrun_change", args=[last["id"]]),
                last["id"],
                last["trigger"],
                last["error"][
                    :500
                ],  # skills are superusers' (SuperuserOnlyAdminMixin): they read run contents
            )
        return format_html(
            "<table><tr><th>{}</th><th>{}</th><th>{}</th></tr>{}</table><p>{}: {} ({} / {})</p><p>{}: {}</p>",
            _t("trigger"), _t("runs"), _t("failed"), rows,
            _t("failure rate"), rate, stats["failed"], stats["total"],
            _t("last error"), error,
        )  # fmt: skip

    @admin.display(description=_("Test run"))
    def test_run(self, obj):
        url = reverse("admin:skills_skill_test_run", args=[obj.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _t("Test run"))

    def get_urls(self):
        view = self.admin_site.admin_view(self.test_run_view)
        return [path("<int:pk>/test-run/", view, name="skills_skill_test_run"), *super().get_urls()]

    def test_run_view(self, request, pk: int):
        """Run the prompt skill on sample input: the prompt sent, the output, its validation,
        and what an event's run would keep. Nothing is recorded or kept."""
        skill = get_object_or_404(Skill, pk=pk, builtin=False)
        if not (self.has_view_permission(request, skill) and may_test_run(request.user)):
            raise PermissionDenied
        form = TestRunForm(request.POST or None)
        result = (
            skill_test_run(name=skill.name, input=form.cleaned_data["input"]) if form.is_valid() else None
        )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": skill,
            "title": _t("Test run of %(name)s") % {"name": skill.name},
            "form": form,
            "result": result,
            "pretty": _pretty(result["output"]) if result and result["output"] is not None else "",
        }
        return TemplateResponse(request, "admin/skills/skill/test_run.html", context)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and not (obj and obj.builtin)

    @admin.display(description=_("runs"))
    def runs(self, obj):
        url = reverse("admin:skills_skillrun_changelist") + f"?skill_name={obj.name}"
        return format_html('<a href="{}">{}</a>', url, _("runs"))

    @admin.action(description=_("Enable selected skills"))
    def enable(self, request, queryset):
        self._set_enabled(request, queryset, True)

    @admin.action(description=_("Disable selected skills"))
    def disable(self, request, queryset):
        self._set_enabled(request, queryset, False)

    def _set_enabled(self, request, queryset, value: bool):
        for skill in queryset.exclude(enabled=value):
            skill.enabled = value
            skill._change_reason = f"{'enabled' if value else 'disabled'} in admin"
            skill.save(update_fields=["enabled", "updated_at"])
            audit_record(
                action="admin.change", actor=request.user.get_username(), object_type="skills.skill",
                object_id=skill.pk, detail={"object": skill.name, "changes": {"enabled": [not value, value]}},
            )  # fmt: skip
        done = _("Enabled %(n)d skill(s).") if value else _("Disabled %(n)d skill(s).")
        messages.success(request, done % {"n": queryset.count()})

    @admin.action(description=_("Re-sync built-in skills from code"))
    def sync_builtins(self, request, queryset):
        messages.success(request, _("Synced %(n)d built-in skill(s).") % {"n": len(skill_sync_builtins())})


class TriggerKindFilter(admin.SimpleListFilter):
    """Triggers carry ids ("session:42", "event:session.ended"): filter by the part before ":"."""

    title = _("trigger")
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


class EventFilter(admin.SimpleListFilter):
    """Runs an event made (trigger `event:<name>`), by event."""

    title = _("event")
    parameter_name = "event"

    def lookups(self, request, model_admin):
        return [(event, event) for event in bus.EVENTS]

    def queryset(self, request, queryset):
        return queryset.filter(trigger=f"event:{self.value()}") if self.value() else queryset


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
    list_filter = ["status", "skill_name", TriggerKindFilter, EventFilter, "used_llm", "tenant", "created_at"]
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
        "kept",
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

    @admin.display(description=_("input"))
    def input_pretty(self, obj):
        return _pretty(obj.input)

    @admin.display(description=_("output"))
    def output_pretty(self, obj):
        return _pretty(obj.output)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return may_delete_runs(request.user)
