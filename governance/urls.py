"""The governance pages, under /admin/governance/ (docs/operations.md, Roles)."""

from django.contrib import admin
from django.urls import path, re_path

from governance import views

app_name = "governance"

urlpatterns = [
    path("user/<int:user_id>/", admin.site.admin_view(views.user_page), name="user"),
    re_path(
        r"^user/(?P<user_id>[0-9]+)/export\.(?P<fmt>json|csv)$",
        admin.site.admin_view(views.user_export_view),
        name="user_export",
    ),
    path("user/<int:user_id>/purge/", admin.site.admin_view(views.user_purge_view), name="user_purge"),
]
