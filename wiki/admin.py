"""Governance of the wiki: entities, pages with their sections, stale sections to confirm.

Non-superusers see only the sections `visible_to` them (stale ones included, so they can
confirm them), and of those only the versions the access filter lets them read; only pages
with at least one such section; and a page's summary only when they may see every section
it was made from (`selectors.page_summary_for_user`), read-only.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Exists, OuterRef
from simple_history.admin import SimpleHistoryAdmin

from almanac.admin_mixins import HiddenFieldsAdminMixin, ScopedHistoryAdminMixin, TenantScopedAdminMixin
from wiki import selectors, services
from wiki.models import Entity, Page, PageSection
from wiki.services.compiler import STATUS_REASON

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
# Made from every section of the page, private ones included: superusers only.
SUMMARY_FIELDS = ["summary", "summary_digest", "summary_section_ids"]
# A project's status says what an issue in some container did: staff who cannot read that
# container's sections must not learn it here either (superusers see it).
STATUS_FIELDS = ["status", "status_at", "status_container"]


def _visible_sections(request):
    qs = PageSection.objects.all()
    return qs if request.user.is_superuser else qs.visible_to(request.user, include_stale=True)


@admin.register(Entity)
class EntityAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "kind", "key", "tenant", "user", "updated_at"]
    list_filter = ["kind", "tenant"]
    search_fields = ["name", "key", "aliases"]
    readonly_fields = ["key", "alias_keys", "created_at", "updated_at"]
    raw_id_fields = ["user"]

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(Exists(_visible_sections(request).filter(page__entity_id=OuterRef("pk"))))

    def save_model(self, request, obj, form, change):
        services.entity_update(entity=obj, aliases=obj.aliases, user=obj.user)


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
class PageAdmin(HiddenFieldsAdminMixin, ScopedHistoryAdminMixin, TenantScopedAdminMixin, SimpleHistoryAdmin):
    hidden_fields = (*SUMMARY_FIELDS, *STATUS_FIELDS)
    list_display = ["title", "slug", "kind", "status", "tenant", "updated_at"]
    list_filter = ["kind", "status", "tenant"]
    search_fields = ["title", "slug", "entity__aliases"]
    readonly_fields = [
        "entity",
        "summary_digest",
        "summary_section_ids",
        "status_at",
        "status_container",
        "created_at",
        "updated_at",
    ]
    inlines = [SectionInline]

    def get_list_display(self, request):
        fields = super().get_list_display(request)
        return fields if request.user.is_superuser else [f for f in fields if f not in STATUS_FIELDS]

    def get_list_filter(self, request):
        fields = super().get_list_filter(request)
        return fields if request.user.is_superuser else [f for f in fields if f not in STATUS_FIELDS]

    def get_queryset(self, request):
        qs = super().get_queryset(request).select_related("tenant")
        if request.user.is_superuser:
            return qs
        return qs.filter(Exists(_visible_sections(request).filter(page_id=OuterRef("pk"))))

    def get_object(self, request, object_id, from_field=None):
        page = super().get_object(request, object_id, from_field)
        if page is not None and not request.user.is_superuser:
            visible_ids = set(
                PageSection.objects.visible_to(request.user).filter(page=page).values_list("id", flat=True)
            )
            page.summary_for_reader = selectors.page_summary_for_user(
                user=request.user, page=page, visible_ids=visible_ids
            )
        return page

    def get_exclude(self, request, obj=None):
        exclude = list(super().get_exclude(request, obj) or [])
        return exclude if request.user.is_superuser else [*exclude, *SUMMARY_FIELDS, *STATUS_FIELDS]

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        if request.user.is_superuser:
            return fields
        hidden = [*SUMMARY_FIELDS, *STATUS_FIELDS]
        return [*(f for f in fields if f not in hidden), "reader_summary"]

    def get_history_hidden_fields(self, request):
        return [] if request.user.is_superuser else [*SUMMARY_FIELDS, *STATUS_FIELDS]

    def get_history_queryset(self, request, history_manager, pk_name, object_id):
        # A row that only changed the status would say when an issue moved, in its reason
        # and its time: not shown to scoped staff at all.
        qs = super().get_history_queryset(request, history_manager, pk_name, object_id)
        return qs if request.user.is_superuser else qs.exclude(history_change_reason=STATUS_REASON)

    @admin.display(description="summary")
    def reader_summary(self, obj) -> str:
        # Set by get_object for this reader; a historical version has none: nothing shown.
        return getattr(obj, "summary_for_reader", "")


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
    list_select_related = ["page"]

    def has_add_permission(self, request):
        return False  # a section is the compiler's (its thread, container and events)

    def get_queryset(self, request):
        # `visible_to` is bound to the user's tenant already; the tenant mixin is here for
        # the list filters.
        return _visible_sections(request).select_related("page")

    @admin.action(description="Confirm stale sections (make them current again)")
    def confirm_stale_sections(self, request, queryset):
        confirmed = 0
        for page_id in sorted(set(queryset.filter(stale=True).values_list("page_id", flat=True))):
            page = Page.objects.get(pk=page_id)
            ids = list(queryset.filter(stale=True, page_id=page_id).values_list("id", flat=True))
            confirmed += len(
                services.section_confirm(
                    user=request.user, page=page, section_ids=ids, as_admin=request.user.is_superuser
                )
            )
        self.message_user(request, f"{confirmed} section(s) confirmed.", messages.SUCCESS)
