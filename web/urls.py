from django.urls import path

from web.views import context, memories, search, settings, wiki

urlpatterns = [
    path("", search.home, name="home"),
    path("search", search.search, name="web-search"),
    path("wiki/", wiki.wiki_list, name="web-wiki"),
    path("wiki/<str:slug>/", wiki.wiki_page, name="web-wiki-page"),
    path("wiki/<str:slug>/confirm", wiki.wiki_confirm, name="web-wiki-confirm"),
    path("memories/", memories.memory_list_view, name="web-memories"),
    path("memories/<int:memory_id>/delete", memories.memory_delete_view, name="web-memory-delete"),
    path("memories/documents", memories.document_upload_view, name="web-document-upload"),
    path("context/", context.context_preview, name="web-context"),
    path("settings/", settings.settings_view, name="web-settings"),
]
