"""Governance of the wiki: entities, pages with their sections, stale sections to confirm.

Non-superusers see only the sections `visible_to` them (stale ones included, so they can
confirm them), and of those only the versions the access filter lets them read; only pages
with at least one such section; and a page's summary as they read it (made from the sections
they may see, `wiki.services.summary.page_summary_for_reader`), read-only.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils.translation import gettext_lazy as _
from django_q.tasks import async_task
from simple_history.admin import SimpleHistoryAdmin

from almanac.admin_actions import confirmation_page
from almanac.admin_audit import AuditedAdminMixin
from almanac.admin_mixins import (
    HiddenFieldsAdminMixin,
    ScopedHistoryAdminMixin,
    TenantScopedAdminMixin,
    staff_tenant_id,
)
from almanac.errors import ApplicationError
from almanac.models import Tenant
from almanac.permissions import runs_installation, sees_everything
from wiki import folding
from wiki.models import Entity, Page, PageSection, Rebuild, Steward
from wiki.services.compiler import STATUS_REASON
from wiki.services.entities import entity_create, entity_key_taken, entity_update
from wiki.services.merge import entity_merge
from wiki.services.rebuild import rebuild_start
from wiki.services.sections import section_confirm
from wiki.services.status import page_status_mark
from wiki.services.summary import page_summary_for_reader

SECTION_READONLY = [
    "tenant",
    "thread_key",
    "container_key",
    "container_name",
    "acl",
    "authors",
    "event_ids",
    "source_list",
    "recall_event_ids",
    "confirmed_recall_ids",
    "occurred_at",
    "created_at",
    "updated_at",
]
# A project's status says what an issue in some container did: staff who cannot read that
# container's sections must not learn it here either (superusers see it).
STATUS_FIELDS = ["status", "status_at", "status_container"]
# A person's mark: every reader of the page sees it, staff included.
MANUAL_STATUS_FIELDS = ["status_manual", "status_manual_at", "status_manual_by"]


def _visible_sections(request):
    qs = PageSection.objects.all()
    return qs if sees_everything(request.user) else qs.visible_to(request.user, include_stale=True)


class EntityAdminForm(forms.ModelForm):
    """Names are unique per tenant and kind once folded (`Vercel Inc.` is `vercel`): a clash
    is a form error, not a database error."""

    class Meta:
        model = Entity
        fields = ["tenant", "kind", "name", "aliases", "user"]

    def clean(self):
        data = super().clean()
        tenant, kind, name = data.get("tenant"), data.get("kind"), data.get("name")
        if self.instance.pk:
            tenant, kind = self.instance.tenant, self.instance.kind
        if tenant and kind and name:
            if not folding.fold(name):
                self.add_error("name", _("This name is empty once folded (punctuation, legal suffixes)."))
            elif entity_key_taken(tenant_id=tenant.pk, kind=kind, name=name, exclude_pk=self.instance.pk):
                self.add_error(
                    "name",
                    _("A %(kind)s with this name already exists (names are compared folded).")
                    % {"kind": kind},
                )
        return data


@admin.register(Entity)
class EntityAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    form = EntityAdminForm
    list_display = ["name", "kind", "key", "tenant", "user", "updated_at"]
    list_filter = ["kind", "tenant"]
    search_fields = ["name", "key", "aliases"]
    readonly_fields = ["key", "alias_keys", "named_in", "created_at", "updated_at"]
    raw_id_fields = ["user"]
    actions = ["merge_entities"]

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if sees_everything(request.user):
            return qs
        # A name known tenant-wide (public, directory, admin) is no secret; one known only
        # from private containers shows through a section the staff user may read.
        tenant = Tenant.objects.filter(pk=staff_tenant_id(request)).first()
        named = Q(named_in__contains=[tenant.group_key]) if tenant else Q(pk__in=[])
        return qs.filter(named | Q(Exists(_visible_sections(request).filter(page__entity_id=OuterRef("pk")))))

    # Where a name was seen lists private containers (mail threads, channels): for the
    # whole installation's administrators only.
    _CONTAINER_FIELDS = ("named_in", "alias_keys")

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if not sees_everything(request.user):
            fields = [f for f in fields if f not in self._CONTAINER_FIELDS]
        return [*fields, "tenant", "kind"] if obj is not None else fields

    def get_exclude(self, request, obj=None):
        exclude = list(super().get_exclude(request, obj) or [])
        return exclude if sees_everything(request.user) else [*exclude, *self._CONTAINER_FIELDS]

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            entity_update(
                entity=obj, name=data["name"], aliases=data.get("aliases") or [], user=data.get("user")
            )
            return
        created = entity_create(
            tenant=data["tenant"],
            kind=data["kind"],
            name=data["name"],
            aliases=data.get("aliases") or [],
            user=data.get("user"),
        )
        obj.pk, obj.key, obj.alias_keys = created.pk, created.key, created.alias_keys
        obj._state.adding, obj._state.db = False, created._state.db

    # Merging deletes one of the two: only for those who may delete entities.
    @admin.action(
        description=_("Merge the two selected entities"),
        permissions=["delete"],  # Django offers an action to those holding any one of these
    )
    def merge_entities(self, request, queryset):
        entities = list(queryset.order_by("created_at", "id")[:3])
        if len(entities) != 2:
            self.message_user(request, _("Select exactly two entities to merge."), messages.ERROR)
            return None
        if request.POST.get("post") != "yes":
            return confirmation_page(
                self, request, queryset, action="merge_entities", title=_("Merge entities"),
                question=_("The other entity is deleted: its names become aliases of the one kept, "
                           "and its pages' sections move there. This cannot be undone."),
                choices=("survivor", _("Keep"), [(e.pk, f"{e.name} ({e.kind}, {e.key})") for e in entities]),
            )  # fmt: skip
        keep = request.POST.get("survivor")
        survivor, merged = entities if str(entities[0].pk) == keep or not keep else entities[::-1]
        try:
            entity_merge(survivor=survivor, merged=merged, actor=request.user)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return None
        self.message_user(
            request,
            _("Merged %(merged)s into %(survivor)s.") % {"merged": merged.name, "survivor": survivor.name},
            messages.SUCCESS,
        )
        return None


class SectionInline(admin.TabularInline):
    model = PageSection
    extra = 0
    fields = ["container_name", "title", "occurred_at", "stale", "stale_reason"]
    readonly_fields = fields
    show_change_link = True
    can_delete = False

    def get_queryset(self, request):
        return _visible_sections(request)

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Page)
class PageAdmin(
    AuditedAdminMixin,
    HiddenFieldsAdminMixin,
    ScopedHistoryAdminMixin,
    TenantScopedAdminMixin,
    SimpleHistoryAdmin,
):
    hidden_fields = (*STATUS_FIELDS, *MANUAL_STATUS_FIELDS)
    list_display = ["title", "slug", "kind", "status", "tenant", "updated_at"]
    list_filter = ["kind", "status", "tenant"]
    search_fields = ["title", "slug", "entity__aliases"]
    readonly_fields = [
        "entity",
        "reader_summary",
        "status_at",
        "status_container",
        *MANUAL_STATUS_FIELDS,
        "created_at",
        "updated_at",
    ]
    inlines = [SectionInline]
    actions = ["mark_closed", "mark_open", "mark_from_facts"]

    def get_list_display(self, request):
        fields = super().get_list_display(request)
        return fields if sees_everything(request.user) else [f for f in fields if f not in STATUS_FIELDS]

    def get_list_filter(self, request):
        fields = super().get_list_filter(request)
        return fields if sees_everything(request.user) else [f for f in fields if f not in STATUS_FIELDS]

    def get_queryset(self, request):
        qs = super().get_queryset(request).select_related("tenant")
        if sees_everything(request.user):
            return qs
        return qs.filter(Exists(_visible_sections(request).filter(page_id=OuterRef("pk"))))

    def get_object(self, request, object_id, from_field=None):
        page = super().get_object(request, object_id, from_field)
        if page is not None:
            page.summary_for_reader = page_summary_for_reader(user=request.user, page=page)
        return page

    def get_exclude(self, request, obj=None):
        exclude = list(super().get_exclude(request, obj) or [])
        hidden = [*STATUS_FIELDS, *MANUAL_STATUS_FIELDS]
        return exclude if sees_everything(request.user) else [*exclude, *hidden]

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        if sees_everything(request.user):
            return fields
        hidden = [*STATUS_FIELDS, *MANUAL_STATUS_FIELDS]
        return [f for f in fields if f not in hidden]

    def get_history_hidden_fields(self, request):
        return [] if sees_everything(request.user) else [*STATUS_FIELDS, *MANUAL_STATUS_FIELDS]

    def get_history_queryset(self, request, history_manager, pk_name, object_id):
        # A row that only changed the status would say when an issue moved, in its reason
        # and its time: not shown to scoped staff at all.
        qs = super().get_history_queryset(request, history_manager, pk_name, object_id)
        return qs if sees_everything(request.user) else qs.exclude(history_change_reason=STATUS_REASON)

    def get_actions(self, request):
        # Staff who are not superusers see no status here: they neither mark one.
        actions = super().get_actions(request)
        if not sees_everything(request.user):
            for name in ("mark_closed", "mark_open", "mark_from_facts"):
                actions.pop(name, None)
        return actions

    def _mark(self, request, queryset, status: str) -> None:
        for page in queryset:
            page_status_mark(page=page, status=status, user=request.user)
        self.message_user(request, _("%(n)d page(s) marked.") % {"n": queryset.count()}, messages.SUCCESS)

    @admin.action(description=_("Mark closed (until an issue or PR changes)"))
    def mark_closed(self, request, queryset):
        self._mark(request, queryset, Page.Status.CLOSED)

    @admin.action(description=_("Mark open (until an issue or PR changes)"))
    def mark_open(self, request, queryset):
        self._mark(request, queryset, Page.Status.OPEN)

    @admin.action(description=_("Status from the facts again (clear the mark)"))
    def mark_from_facts(self, request, queryset):
        self._mark(request, queryset, "")

    @admin.display(description=_("summary"))
    def reader_summary(self, obj) -> str:
        # Set by get_object for this reader; a historical version has none: nothing shown.
        return getattr(obj, "summary_for_reader", "")


class ConfirmActionForm(ActionForm):
    reason = forms.CharField(required=False, max_length=500, help_text=_("why a recalled section stands"))


@admin.register(PageSection)
class PageSectionAdmin(ScopedHistoryAdminMixin, TenantScopedAdminMixin, SimpleHistoryAdmin):
    history_acl = True
    list_display = ["page", "container_name", "title", "occurred_at", "stale", "updated_at"]
    list_filter = ["stale", "page__kind", "tenant"]
    search_fields = ["content", "title", "thread_key", "container_key", "page__title"]
    # Sections are compiled from sources; governance only confirms stale ones (action below).
    readonly_fields = [
        *SECTION_READONLY,
        "page",
        "title",
        "content",
        "stale",
        "stale_reason",
        "content_digest",
    ]
    exclude = ["embedding", "tokens", "tf", "doc_len"]
    actions = ["confirm_stale_sections"]
    action_form = ConfirmActionForm
    list_select_related = ["page"]

    def has_add_permission(self, request):
        return False  # a section is the compiler's (its thread, container and events)

    def get_queryset(self, request):
        # `visible_to` is bound to the user's tenant already; the tenant mixin is here for
        # the list filters.
        return _visible_sections(request).select_related("page")

    @admin.action(description=_("Confirm stale sections (make them current again)"))
    def confirm_stale_sections(self, request, queryset):
        reason = request.POST.get("reason", "").strip()
        if not reason:
            self.message_user(request, _("Give a reason to confirm recalled sections."), messages.ERROR)
            return
        confirmed = 0
        for page_id in sorted(set(queryset.filter(stale=True).values_list("page_id", flat=True))):
            page = Page.objects.get(pk=page_id)
            ids = list(queryset.filter(stale=True, page_id=page_id).values_list("id", flat=True))
            confirmed += len(
                section_confirm(
                    user=request.user,
                    page=page,
                    section_ids=ids,
                    reason=reason,
                    as_admin=sees_everything(request.user),
                )
            )
        self.message_user(request, _("%(n)d section(s) confirmed.") % {"n": confirmed}, messages.SUCCESS)


@admin.register(Steward)
class StewardAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    """Who may confirm a container's recalled sections besides the sender and admins."""

    list_display = ["user", "container_key", "tenant", "note", "created_at"]
    list_filter = ["tenant"]
    search_fields = ["container_key", "user__username", "note"]
    raw_id_fields = ["user"]


class RebuildAdminForm(forms.ModelForm):
    class Meta:
        model = Rebuild
        fields = ["tenant", "page_slug"]

    def clean(self):
        data = super().clean()
        tenant, slug = data.get("tenant"), data.get("page_slug")
        if tenant and slug and not Page.objects.filter(tenant=tenant, slug=slug).exists():
            raise forms.ValidationError(
                {"page_slug": _("no page %(slug)r in %(tenant)s") % {"slug": slug, "tenant": tenant.slug}}
            )
        return data


@admin.register(Rebuild)
class RebuildAdmin(AuditedAdminMixin, admin.ModelAdmin):
    """Wiki rebuilds (`manage.py wiki_rebuild`) and their progress; superusers start one here
    (a tenant, optionally one page), and a qcluster runs it. Superusers only: a page slug may
    name an entity known only in private containers."""

    form = RebuildAdminForm
    list_display = ["id", "tenant", "scope", "state", "progress", "created_at", "started_at", "finished_at"]
    list_filter = ["state", "tenant"]
    readonly_fields = [
        "state",
        "events_done",
        "events_total",
        "threads_done",
        "threads_total",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    ]

    def has_module_permission(self, request):
        return runs_installation(request.user)

    def has_view_permission(self, request, obj=None):
        return runs_installation(request.user)

    def has_add_permission(self, request):
        return runs_installation(request.user)

    def has_change_permission(self, request, obj=None):
        return False  # progress is written by the run

    def has_delete_permission(self, request, obj=None):
        return runs_installation(request.user) and (obj is None or obj.state != obj.State.RUNNING)

    @admin.display(description=_("scope"))
    def scope(self, obj: Rebuild) -> str:
        return obj.page_slug or _("all pages")

    @admin.display(description=_("progress"))
    def progress(self, obj: Rebuild) -> str:
        share = f" ({100 * obj.events_done // obj.events_total}%)" if obj.events_total else ""
        return f"events {obj.events_done}/{obj.events_total}{share}, threads {obj.threads_done}/{obj.threads_total}"

    def save_model(self, request, obj, form, change):
        rebuild = rebuild_start(tenant=obj.tenant, page_slug=obj.page_slug)
        obj.pk, obj.state, obj.created_at = rebuild.pk, rebuild.state, rebuild.created_at
        transaction.on_commit(lambda: async_task("wiki.tasks.rebuild_task", rebuild.pk))
