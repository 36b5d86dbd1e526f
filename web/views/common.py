"""What every employee view shares: the login guard for htmx, service errors in the reader's
language, the page size."""

from __future__ import annotations

import functools
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.utils.translation import gettext_lazy
from django_htmx.http import HttpResponseClientRedirect

from almanac.errors import ApplicationError

PER_PAGE = 50

# Service errors the web UI can show, in the reader's language (the API keeps the English).
SERVICE_MESSAGES = {
    "only the owner or a governor may delete this memory": gettext_lazy(
        "only the owner or a governor may delete this memory"
    ),
    "the user belongs to no tenant: there is nothing to show": gettext_lazy(
        "the user belongs to no tenant: there is nothing to show"
    ),
    "only the owner or a governor may change this memory": gettext_lazy(
        "only the owner or a governor may change this memory"
    ),
    "only the owner or a governor may purge this memory": gettext_lazy(
        "only the owner or a governor may purge this memory"
    ),
    "only the owner or a governor may restore this memory": gettext_lazy(
        "only the owner or a governor may restore this memory"
    ),
    "this memory was deleted everywhere: it cannot be restored": gettext_lazy(
        "this memory was deleted everywhere: it cannot be restored"
    ),
    "this memory was deleted too long ago to be restored": gettext_lazy(
        "this memory was deleted too long ago to be restored"
    ),
    "content may not be empty": gettext_lazy("content may not be empty"),
}


def service_message(exc: ApplicationError) -> str:
    return str(SERVICE_MESSAGES.get(exc.message, exc.message))


def login_required_htmx(view):
    """`login_required`, but an htmx request of an expired session is sent to the login page
    as a whole page (HX-Redirect), not swapped into the part of the page that asked."""
    guarded = login_required(view)

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.htmx and not request.user.is_authenticated:
            current = request.htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(f"{settings.LOGIN_URL}?{urlencode({'next': current})}")
        return guarded(request, *args, **kwargs)

    return wrapper
