from django.urls import path

from web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("search", views.search, name="web-search"),
    path("wiki/", views.wiki_list, name="web-wiki"),
    path("wiki/<str:slug>/", views.wiki_page, name="web-wiki-page"),
    path("wiki/<str:slug>/confirm", views.wiki_confirm, name="web-wiki-confirm"),
    path("memories/", views.memory_list_view, name="web-memories"),
    path("memories/<int:memory_id>/delete", views.memory_delete_view, name="web-memory-delete"),
    path("memories/documents", views.document_upload_view, name="web-document-upload"),
    path("context/", views.context_preview, name="web-context"),
    path("settings/", views.settings_view, name="web-settings"),
]
