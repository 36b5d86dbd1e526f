from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from almanac.login import LoginForm
from config.api import api, no_such_endpoint
from context.mcp.views import mcp_endpoint
from metrics.views import metrics_view

urlpatterns = [
    path("admin/governance/", include("governance.urls")),  # before the admin's catch-all
    path("admin/", admin.site.urls),
    # ninja's own root view answers an HTML 404 outside the API's handlers: ours is JSON.
    path("api/v1/", no_such_endpoint, {"rest": "v1/"}),
    path("api/v1/", api.urls),
    re_path(r"^api/(?P<rest>[\s\S]*)$", no_such_endpoint),
    path("mcp", mcp_endpoint, name="mcp"),  # MCP, Streamable HTTP (docs/agents.md, MCP)
    path("metrics", metrics_view, name="metrics"),  # Prometheus (docs/operations.md, "Metrics")
    # Not django.contrib.auth.urls: its password reset sends mail, and no mail server is
    # configured (a reset request would fail); an administrator sets a forgotten password.
    path("accounts/login/", auth_views.LoginView.as_view(authentication_form=LoginForm), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(template_name="registration/change_password.html"),
        name="password_change",
    ),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="registration/change_password_done.html"),
        name="password_change_done",
    ),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("web.urls")),
]

# Error pages in the reader's language, JSON on the agent API's paths (web.views.errors).
handler400 = "web.views.errors.bad_request"
handler403 = "web.views.errors.permission_denied"
handler404 = "web.views.errors.page_not_found"
handler500 = "web.views.errors.server_error"
