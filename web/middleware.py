"""Telling "your session ended, sign in again" from "never signed in"; refusals without a
page of their own given one (`RefusalPagesMiddleware`).

A browser that signs in gets a flag cookie that outlives the session (it goes at log out).
A request that carries the flag but no signed-in user comes from a session that ended: it
expired, or it was ended on the server (a password changed elsewhere, a user deactivated).
Pages say so (`request.session_ended`, templates/base.html); the login page that said it
clears the flag, so the notice is shown once there.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from web.views import errors

SIGNED_IN_COOKIE = "almanac_signed_in"
SIGNED_IN_MAX_AGE = 365 * 24 * 3600


class SessionEndedMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        flagged = request.COOKIES.get(SIGNED_IN_COOKIE) == "1"
        had_user = request.user.is_authenticated
        request.session_ended = flagged and not had_user
        response = self.get_response(request)
        has_user = request.user.is_authenticated
        if has_user and not flagged:
            response.set_cookie(
                SIGNED_IN_COOKIE,
                "1",
                max_age=SIGNED_IN_MAX_AGE,
                httponly=True,
                samesite="Lax",
                secure=settings.SESSION_COOKIE_SECURE,
            )
        elif flagged and not has_user and (had_user or self._notice_shown(request, response)):
            response.delete_cookie(SIGNED_IN_COOKIE, samesite="Lax")
        return response

    @staticmethod
    def _notice_shown(request, response) -> bool:
        return request.method == "GET" and request.path == reverse("login") and response.status_code == 200


class RefusalPagesMiddleware:
    """The web UI's refusals that come without a page of their own, as pages in the reader's
    language: a form's address opened by a visit (405, an empty body from
    `require_POST`), and input the database refused (400, a line of technical text from
    config.middleware's BadInputMiddleware). The agent API keeps its JSON; the admin its
    own answers."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith((*errors.API_PREFIXES, "/admin/")):
            return response
        kind = response.get("Content-Type", "")
        if response.status_code == 405 and not response.content:
            page = errors.method_not_allowed(request)
            page["Allow"] = response.get("Allow", "")
            return page
        if response.status_code == 400 and kind.startswith("text/plain"):
            return errors.bad_request(request)
        return response
