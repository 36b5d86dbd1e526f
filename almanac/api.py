"""The NinjaAPI root: routers, auth and the JSON error contract of API.md."""

from __future__ import annotations

import logging
import re

from django.db import DatabaseError, DataError, connection
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from almanac.auth import acting_user, api_auth
from almanac.errors import ApplicationError
from almanac.jsonbody import StrictParser
from almanac.selectors import user_group_keys, user_tenant
from almanac.throttling import CallerRateThrottle

log = logging.getLogger(__name__)

api = NinjaAPI(
    title="Almanac",
    version="1",
    urls_namespace="api",
    auth=api_auth,
    docs_url="/docs",
    parser=StrictParser(),
    throttle=[CallerRateThrottle()],
)

api.add_router("/memories", "memories.api.router")
api.add_router("/sessions", "memories.api.sessions_router")
api.add_router("/wiki", "wiki.api.router")
api.add_router("/connectors", "connectors.api.router")
api.add_router("/context", "context.api.router")


@api.exception_handler(ApplicationError)
def on_application_error(request, exc: ApplicationError):
    return api.create_response(request, {"detail": exc.message, **exc.extra}, status=exc.status_code)


@api.exception_handler(ValidationError)
def on_validation_error(request, exc: ValidationError):
    return api.create_response(request, {"detail": exc.errors}, status=422)


@api.exception_handler(AuthenticationError)
def on_auth_error(request, exc):
    return api.create_response(request, {"detail": "invalid or missing agent key"}, status=401)


@api.exception_handler(Http404)
def on_not_found(request, exc):
    return api.create_response(request, {"detail": str(exc) or "not found"}, status=404)


@api.exception_handler(HttpError)
def on_http_error(request, exc: HttpError):
    if isinstance(exc.__cause__, ApplicationError):  # the body parser's own reason (almanac.jsonbody)
        return on_application_error(request, exc.__cause__)
    return api.create_response(request, {"detail": exc.message}, status=exc.status_code)


@api.exception_handler(DataError)
def on_data_error(request, exc):
    # Values the database refuses (NUL bytes, out-of-range numbers) are the caller's input.
    # Its first line only: the rest quotes the SQL statement.
    reason = str(exc.__cause__ or exc).strip().splitlines()[0][:300]
    if re.search(r"different vector dimensions|expected \d+ dimensions, not \d+", reason):
        # The server's configuration (EMBEDDING_DIM against the columns), not the request.
        detail = (
            f"the embedding model changed its dimension ({reason}): an operator must run manage.py reembed"
        )
        return api.create_response(request, {"detail": detail}, status=503)
    return api.create_response(request, {"detail": f"invalid value: {reason}"}, status=400)


@csrf_exempt  # a POST to no endpoint is a 404, not a CSRF failure page
def no_such_endpoint(request, rest: str = ""):
    """Everything under /api/ that no endpoint serves: a JSON 404, as the contract promises
    (Django's own page is HTML, and its trailing-slash redirect cannot carry a POST)."""
    return JsonResponse({"detail": f"no such endpoint: {request.method} {request.path}"}, status=404)


@api.get("/health", auth=None, tags=["health"])
def health(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM django_q_ormq")
            pending = cursor.fetchone()[0]
    except DatabaseError:
        log.exception("health check failed")
        return api.create_response(
            request, {"status": "error", "database": "error", "queue": {"pending": None}}, status=503
        )
    return {"status": "ok", "database": "ok", "queue": {"pending": pending}}


@api.get("/me", tags=["auth"])
def whoami(request, user: str = ""):
    """Who a call acts for and which access groups that user is in right now."""
    person = acting_user(request, user)
    return {
        "username": person.username,
        "email": person.email,
        "tenant": user_tenant(person).slug,
        "groups": user_group_keys(person),
    }
