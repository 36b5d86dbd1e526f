from django.contrib import admin
from django.urls import include, path, re_path

from almanac import views
from almanac.api import api, no_such_endpoint

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    re_path(r"^api/(?P<rest>[\s\S]*)$", no_such_endpoint),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", views.home, name="home"),
    path("search", views.search, name="web-search"),
    path("wiki/", views.wiki_list, name="web-wiki"),
    path("wiki/<str:slug>/", views.wiki_page, name="web-wiki-page"),
    path("wiki/<str:slug>/confirm", views.wiki_confirm, name="web-wiki-confirm"),
    path("memories/", views.memory_list_view, name="web-memories"),
    path("memories/<int:memory_id>/delete", views.memory_delete_view, name="web-memory-delete"),
    path("context/", views.context_preview, name="web-context"),
]
