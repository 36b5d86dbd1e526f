"""Telling "your session ended, sign in again" from "never signed in".

A browser that signs in gets a flag cookie that outlives the session (it goes at log out).
A request that carries the flag but no signed-in user comes from a session that ended: it
expired, or it was ended on the server (a password changed elsewhere, a user deactivated).
Pages say so (`request.session_ended`, templates/base.html); the login page that said it
clears the flag, so the notice is shown once there.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

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
