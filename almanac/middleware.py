"""Bad input outside the agent API: a 400, never a 500.

The agent API maps the database's refusals itself (almanac.api). The web UI and the admin
pass query strings and form fields to the ORM as they come: a NUL byte, an invalid regular
expression in an admin lookup, or a year the date hierarchy cannot step past is the
database (or Django) refusing the caller's value. In the admin, which superusers drive by
hand-edited URLs, a ValueError or OverflowError from such a parameter is the same thing.
"""

from __future__ import annotations

import logging

from django.db import DataError, connection, transaction
from django.http import HttpResponseBadRequest, JsonResponse

log = logging.getLogger("almanac")

_ADMIN_INPUT_ERRORS = (ValueError, OverflowError)


class BadInputMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exc):
        is_admin = request.path.startswith("/admin/")
        if not isinstance(exc, DataError) and not (is_admin and isinstance(exc, _ADMIN_INPUT_ERRORS)):
            return None
        log.warning("bad input on %s %s: %s", request.method, request.path, exc)
        if isinstance(exc, DataError) and connection.in_atomic_block:
            transaction.set_rollback(True)  # the refused statement aborted the enclosing transaction
        message = f"invalid value in the request: {exc}".splitlines()[0][:300]
        return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


class ApiMethodNotAllowedMiddleware:
    """A wrong method on an agent API path is a JSON 405 (with its Allow header), like every
    other refusal of the API: django-ninja answers it with a bare text body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            response.status_code == 405
            and request.path.startswith("/api/")
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            allowed = response.get("Allow", "")
            json_response = JsonResponse(
                {"detail": f"method not allowed: {request.method} {request.path} (allowed: {allowed})"},
                status=405,
            )
            json_response["Allow"] = allowed
            return json_response
        return response
