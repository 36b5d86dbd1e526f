from django.urls import path

from web.views import context, memories, search, settings, wiki

urlpatterns = [
    path("", search.home, name="home"),
    path("search", search.search, name="web-search"),
    path("wiki/", wiki.wiki_list, name="web-wiki"),
    path("wiki/<str:slug>/", wiki.wiki_page, name="web-wiki-page"),
    path("wiki/<str:slug>/confirm", wiki.wiki_confirm, name="web-wiki-confirm"),
    path("memories/", memories.memory_list_view, name="web-memories"),
    path("memories/<int:memory_id>/", memories.memory_card_view, name="web-memory"),
    path("memories/<int:memory_id>/edit", memories.memory_edit_view, name="web-memory-edit"),
    path("memories/<int:memory_id>/feedback", memories.memory_feedback_view, name="web-memory-feedback"),
    path("memories/<int:memory_id>/archive", memories.memory_archive_view, name="web-memory-archive"),
    path("memories/<int:memory_id>/unarchive", memories.memory_unarchive_view, name="web-memory-unarchive"),
    path("memories/<int:memory_id>/delete", memories.memory_delete_view, name="web-memory-delete"),
    path("memories/<int:memory_id>/undo", memories.memory_undo_view, name="web-memory-undo"),
    path("memories/<int:memory_id>/purge", memories.memory_purge_view, name="web-memory-purge"),
    path("memories/documents", memories.document_upload_view, name="web-document-upload"),
    path("context/", context.context_preview, name="web-context"),
    path("settings/", settings.settings_view, name="web-settings"),
]
