"""Bad input outside the agent API: a 400, never a 500.

The agent API maps the database's refusals itself (config.api). The web UI and the admin
pass query strings and form fields to the ORM as they come: a NUL byte, an invalid regular
expression in an admin lookup, or a year the date hierarchy cannot step past is the
database (or Django) refusing the caller's value. In the admin, which superusers drive by
hand-edited URLs, a ValueError or OverflowError from such a parameter is the same thing.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig, TooManyFieldsSent
from django.db import DataError, connection, transaction
from django.http import HttpResponseBadRequest, JsonResponse
from django.http.multipartparser import MultiPartParserError, TooManyFilesSent

log = logging.getLogger("almanac")
host_log = logging.getLogger("django.security.DisallowedHost")

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


class ApiRequestGuardMiddleware:
    """Requests to the agent API that Django itself refuses get the API's JSON errors.

    Runs first and reads the request before anything else can fail on it:
    - a Host header outside ALLOWED_HOSTS is a 400 (Django answers an HTML page, with DEBUG
      on the technical page that prints settings);
    - a body over MAX_BODY_BYTES is a 413, a query string with more fields than Django
      parses a 400;
    - the body is read here, so it stays available to the JSON parser after a session
      login's CSRF check has read it as a form. A malformed multipart body (no or a bad
      boundary) parses here as an empty form: the CSRF check then reads its token from the
      header, and the JSON parser refuses the body as it refuses any other body that is not
      JSON, for a session exactly as for an agent key.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            refused = _api_refusal(request)
            if refused is not None:
                return refused
        return self.get_response(request)


def _api_refusal(request) -> JsonResponse | None:
    try:
        request.get_host()
    except DisallowedHost as exc:
        host_log.error("%s", exc)
        return JsonResponse({"detail": "the Host header names a host this server does not serve"}, status=400)
    try:
        request.GET  # noqa: B018 (parsed now, to refuse it now)
    except TooManyFieldsSent:
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return JsonResponse({"detail": f"more than {limit} query parameters"}, status=400)
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return None
    try:
        request.body  # noqa: B018
        request.POST  # noqa: B018 (a form's fields; a malformed multipart body parses as empty)
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return JsonResponse({"detail": f"the request body is larger than {limit} bytes"}, status=413)
    except TooManyFieldsSent:
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return JsonResponse({"detail": f"the form body has more than {limit} fields"}, status=400)
    except (MultiPartParserError, TooManyFilesSent):
        pass  # Django has marked the form empty; the JSON parser refuses the body
    return None
