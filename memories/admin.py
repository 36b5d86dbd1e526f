"""Governance of memories (docs/design.md, Governance): browse, edit, export, archive/reactivate, history.

Non-superusers see only the memories `visible_to` them (any status) and, in their history,
only the versions the access filter lets them read; their own sessions; feedback on, and
links between, memories they can see. They pick owners in their own tenant only. Edits go
through the services, so content changes are re-embedded and re-indexed and history
records the admin user and "admin" as reason.
"""

from __future__ import annotations

import csv
import json

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from almanac.admin_mixins import ScopedHistoryAdminMixin, TenantScopedAdminMixin, units_filter
from almanac.errors import ApplicationError
from almanac.permissions import sees_everything
from almanac.services.audit import audit_record
from almanac.services.users import user_name
from memories.admin_deleted import DeletedMemoriesAdminMixin
from memories.models import ConversationSession, Feedback, Memory, MemoryLink, SessionChunk, Turn
from memories.selectors import SEARCH_FIELDS
from memories.services.attribution import memories_mark_reviewed
from memories.services.compression import memory_restore
from memories.services.memories import memory_create, memory_delete, memory_update
from memories.services.purge import memory_purge
from memories.services.rows import memory_set_status

EXPORT_FIELDS = [
    "id", "owner", "memory_type", "scope", "scope_key", "content", "importance", "status", "access_count",
    "last_access", "quality", "schema_version", "occurred_at", "meta", "created_at", "updated_at",
    "kind", "fact_key", "superseded_by_id",
]  # fmt: skip
EDITABLE = ["content", "importance", "status", "scope", "scope_key", "meta", "occurred_at", "kind"]


def _visible_memories(request):
    if sees_everything(request.user):
        return Memory.objects.all()
    # A department admin: only their departments' and projects' memories (admin_mixins).
    return units_filter(request, Memory.objects.visible_to(request.user, statuses=None))


def _row(memory: Memory) -> dict:
    row = {f: getattr(memory, f) for f in EXPORT_FIELDS}
    row["owner"] = user_name(memory.owner) if memory.owner else None
    for key in ("last_access", "occurred_at", "created_at", "updated_at"):
        row[key] = row[key].isoformat() if row[key] else None
    return row


def _export_audit(request, queryset, fmt: str) -> None:
    """An export takes memories out of the system: one audit event per tenant, with the ids."""
    by_tenant: dict[int, list[int]] = {}
    for tenant_id, pk in queryset.order_by("pk").values_list("tenant_id", "pk"):
        by_tenant.setdefault(tenant_id, []).append(pk)
    for tenant_id, ids in by_tenant.items():
        audit_record(
            action="memory.export",
            tenant_id=tenant_id,
            actor=request.user.get_username(),
            object_type="memory",
            detail={"format": fmt, "count": len(ids), "ids": ids[:1000]},
        )


class MemoryAdminForm(forms.ModelForm):
    """The write goes through the services while the form is validated: what they refuse
    (a scope the owner is not in, a NUL byte, an importance out of range) is a form error
    shown with the input kept, never a "saved" message over a change that was not made.
    The admin's request runs in one transaction, so nothing stays of a refused write."""

    request = None  # set by MemoryAdmin.get_form

    class Meta:
        model = Memory
        fields = [
            "owner",
            "memory_type",
            "content",
            "scope",
            "scope_key",
            "importance",
            "status",
            "kind",
            "occurred_at",
            "meta",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "scope_key" in self.fields:
            self.fields["scope_key"].required = False  # a user's own scope needs none
        if "kind" in self.fields:
            self.fields["kind"].required = False  # none: as it is (a new memory: read from the text)
        self.written = None

    def clean_kind(self):
        kind = self.cleaned_data.get("kind")
        return kind or (self.instance.kind if self.instance.pk else Memory.Kind.FACT)

    def clean_meta(self):
        meta = self.cleaned_data.get("meta")
        if meta in (None, ""):
            return {}
        if not isinstance(meta, dict):
            raise forms.ValidationError(_("meta must be a JSON object"))
        return meta

    def _post_clean(self):
        super()._post_clean()  # the model's own checks first: a write only once all pass
        if self.errors:
            return
        try:
            self.written = self._write(self.cleaned_data)
        except ApplicationError as exc:
            self.add_error(None, exc.message)

    def _write(self, data) -> Memory:
        user = self.request.user
        if self.instance.pk:
            # Compare with the stored row, not the form's initial values: on a history
            # revert the form starts from the old version, so changed_data is empty.
            current = Memory.objects.get(pk=self.instance.pk)
            changes = {f: data[f] for f in EDITABLE if f in data and data[f] != getattr(current, f)}
            return memory_update(
                memory=current, user=user, data=changes, reason="admin", scope_user=current.owner
            )
        if data.get("owner") is None:
            raise ApplicationError("a memory needs an owner")
        memory, _ = memory_create(
            owner=data["owner"], content=data.get("content") or "", memory_type=data.get("memory_type"),
            scope=data.get("scope"), scope_key=data.get("scope_key") or None, importance=data.get("importance"),
            meta=data.get("meta"), occurred_at=data.get("occurred_at"), reason="admin", actor=user,
            # The form's default "fact" is no choice: the text decides then.
            kind=data.get("kind") if data.get("kind") != Memory.Kind.FACT else None,
        )  # fmt: skip
        return memory


@admin.register(Memory)
class MemoryAdmin(
    DeletedMemoriesAdminMixin, ScopedHistoryAdminMixin, TenantScopedAdminMixin, SimpleHistoryAdmin
):
    history_acl = True
    # Readable at 1280 px: the text cut short (whole on hover), scope and key in one column.
    list_display = [
        "id",
        "short_content",
        "owner",
        "kind",
        "scope_label",
        "status",
        "importance",
        "created_at",
    ]
    list_filter = ["memory_type", "kind", "scope", "status", "needs_review", "tenant", "created_at",
                   ("owner", admin.RelatedOnlyFieldListFilter)]  # fmt: skip
    search_fields = ["content", "owner__username", "owner__email", "scope_key"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner"]
    fields = ["tenant", "owner", "memory_type", "kind", "content", "scope", "scope_key", "importance", "status",
              "superseded_by", "fact_key", "needs_review", "quality", "occurred_at", "meta", "acl", "access_count",
              "last_access", "schema_version", "created_at", "updated_at"]  # fmt: skip
    readonly_fields = ["tenant", "acl", "quality", "access_count", "last_access", "schema_version", "created_at",
                       "updated_at", "superseded_by", "fact_key", "needs_review"]  # fmt: skip
    actions = ["export_json", "export_csv", "archive", "reactivate", "restore", "mark_reviewed", "purge"]
    date_hierarchy = "created_at"

    def get_readonly_fields(self, request, obj=None):
        # The owner is chosen when a memory is written; the services change no owner, and a
        # form value here would only decide whose scope the memory moves into.
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "owner", "memory_type"] if obj is not None else fields

    def get_queryset(self, request):
        # `visible_to` is bound to the user's tenant already; the tenant mixin is here for
        # the list filters and the owner choices.
        return _visible_memories(request).select_related("owner").defer(*SEARCH_FIELDS)

    @admin.display(description=_("content"))
    def short_content(self, obj: Memory) -> str:
        return format_html('<span title="{}">{}</span>', obj.content[:1000], Truncator(obj.content).chars(60))

    @admin.display(description=_("scope"), ordering="scope")
    def scope_label(self, obj: Memory) -> str:
        return f"{obj.scope}:{obj.scope_key}" if obj.scope_key else obj.scope

    form = MemoryAdminForm

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"request": request})

    def save_model(self, request, obj, form, change):
        # Written by the services while the form was validated (MemoryAdminForm).
        obj.pk = form.written.pk

    def delete_model(self, request, obj):
        memory_delete(memory=obj, user=request.user, reason="admin")

    def delete_queryset(self, request, queryset):
        for memory in queryset:
            memory_delete(memory=memory, user=request.user, reason="admin")

    @admin.action(description=_("Mark reviewed (scope checked)"))
    def mark_reviewed(self, request, queryset):
        done = memories_mark_reviewed(memories=queryset, user=request.user)
        self.message_user(request, _("%(n)d memories marked reviewed") % {"n": done})

    @admin.action(description=_("Export selected as JSON"))
    def export_json(self, request, queryset):
        rows = [_row(m) for m in queryset.select_related("owner")]
        _export_audit(request, queryset, "json")
        response = HttpResponse(
            json.dumps(rows, ensure_ascii=False, indent=2), content_type="application/json"
        )
        response["Content-Disposition"] = 'attachment; filename="memories.json"'
        return response

    @admin.action(description=_("Export selected as CSV"))
    def export_csv(self, request, queryset):
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="memories.csv"'
        writer = csv.DictWriter(response, fieldnames=EXPORT_FIELDS)
        writer.writeheader()
        rows = [_row(memory) for memory in queryset.select_related("owner")]
        for row in rows:
            writer.writerow({**row, "meta": json.dumps(row["meta"], ensure_ascii=False)})
        _export_audit(request, queryset, "csv")
        return response

    @admin.action(description=_("Archive selected (kept, not retrieved)"))
    def archive(self, request, queryset):
        n = memory_set_status(memories=queryset, status="archived", user=request.user, reason="admin:archive")
        self.message_user(request, _("%(n)d memories archived") % {"n": n})

    @admin.action(description=_("Reactivate selected"))
    def reactivate(self, request, queryset):
        n = memory_set_status(
            memories=queryset, status="active", user=request.user, reason="admin:reactivate"
        )
        self.message_user(request, _("%(n)d memories reactivated") % {"n": n})

    @admin.action(description=_("Restore compressed (a summary left without originals is archived)"))
    def restore(self, request, queryset):
        n = memory_restore(memories=queryset, user=request.user)
        self.message_user(request, _("%(n)d memories restored") % {"n": n})

    @admin.action(description=_("Purge selected (delete and remove the text from history and skill runs)"))
    def purge(self, request, queryset):
        if request.POST.get("post") != "yes":  # a purge cannot be undone: ask first
            return TemplateResponse(
                request,
                "admin/memories/memory/purge_confirmation.html",
                {
                    **self.admin_site.each_context(request),
                    "opts": self.model._meta,
                    "memories": list(queryset.select_related("owner")),
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        done = failed = 0
        for memory in queryset:
            try:
                memory_purge(memory=memory, user=request.user, reason="admin:purge")
                done += 1
            except ApplicationError as exc:
                failed += 1
                self.message_user(request, f"memory {memory.pk}: {exc.message}", messages.ERROR)
        self.message_user(
            request,
            _("%(n)d memories purged") % {"n": done}
            + (_(", %(n)d refused") % {"n": failed} if failed else ""),
        )


class TurnInline(admin.TabularInline):
    model = Turn
    extra = 0
    fields = ["order", "role", "content", "tokens", "folded", "created_at"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class ChunkInline(admin.TabularInline):
    model = SessionChunk
    extra = 0
    fields = ["position", "outcome", "facts", "memories_written", "digest", "created_at"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(ConversationSession)
class ConversationSessionAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "user", "title", "status", "turn_count", "started_at", "ended_at", "extracted_at"]
    list_filter = ["status", "tenant", "started_at"]
    search_fields = ["title", "user__username", "user__email"]
    readonly_fields = ["tenant", "user", "turn_count", "started_at", "ended_at", "extracted_at"]
    list_select_related = ["user"]
    inlines = [TurnInline, ChunkInline]

    def has_add_permission(self, request):
        return False  # sessions are opened by agents (POST /sessions), for a user of a tenant

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        return qs if sees_everything(request.user) else qs.filter(user=request.user)


@admin.register(Feedback)
class FeedbackAdmin(admin.ModelAdmin):
    list_display = ["id", "memory", "user", "signal", "quality_before", "quality_after", "created_at"]
    list_filter = ["signal", "created_at"]
    search_fields = ["memory__content", "user__username"]
    readonly_fields = ["memory", "user", "signal", "quality_before", "quality_after", "created_at"]
    list_select_related = ["memory", "user"]

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        return qs if sees_everything(request.user) else qs.filter(memory__in=_visible_memories(request))

    def has_add_permission(self, request):
        return False


@admin.register(MemoryLink)
class MemoryLinkAdmin(admin.ModelAdmin):
    list_display = ["id", "source", "kind", "target", "created_at"]
    list_filter = ["kind"]
    raw_id_fields = ["source", "target"]

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if sees_everything(request.user):
            return qs
        # Both ends: a link shows its target's content.
        visible = _visible_memories(request)
        return qs.filter(source__in=visible, target__in=visible)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name in ("source", "target") and not sees_everything(request.user):
            kwargs["queryset"] = _visible_memories(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
