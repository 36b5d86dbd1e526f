"""Governance of the wiki: entities, pages with their sections, stale sections to confirm.

Non-superusers see only the sections `visible_to` them (stale ones included, so they can
confirm them) and only pages with at least one such section.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Exists, OuterRef
from simple_history.admin import SimpleHistoryAdmin

from wiki import services
from wiki.models import Entity, Page, PageSection

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


def _visible_sections(request):
    qs = PageSection.objects.all()
    return qs if request.user.is_superuser else qs.visible_to(request.user, include_stale=True)


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
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
class PageAdmin(SimpleHistoryAdmin):
    list_display = ["title", "slug", "kind", "status", "tenant", "updated_at"]
    list_filter = ["kind", "status", "tenant"]
    search_fields = ["title", "slug", "entity__aliases"]
    readonly_fields = [
        "entity",
        "summary_digest",
        "summary_section_ids",
        "status_at",
        "created_at",
        "updated_at",
    ]
    inlines = [SectionInline]

    def get_queryset(self, request):
        qs = super().get_queryset(request).select_related("tenant")
        if request.user.is_superuser:
            return qs
        return qs.filter(Exists(_visible_sections(request).filter(page_id=OuterRef("pk"))))


@admin.register(PageSection)
class PageSectionAdmin(SimpleHistoryAdmin):
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

    def get_queryset(self, request):
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
