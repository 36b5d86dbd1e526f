"""The NinjaAPI root: the apps' routers, auth and the JSON error contract (docs/api.md)."""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import DataError
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.schema import OpenAPISchema
from pydantic import ConfigDict

from almanac.auth import api_auth
from almanac.errors import ApplicationError
from almanac.jsonbody import StrictParser
from almanac.throttling import CallerRateThrottle


class ErrorOut(Schema):
    """Every refusal of the API: `detail` says why (a list of field errors for a 422 from
    validation); some errors add fields (e.g. `index`, the failing event of a batch)."""

    model_config = ConfigDict(extra="allow", title="Error")

    detail: str | list[dict[str, Any]]


# What each error status means, for every operation that can return it (docs/api.md).
ERROR_MEANINGS = {
    400: "Malformed request: a body that is not JSON (UTF-8) or nests too deep, more query "
    "parameters than the server parses, a value the database refuses, a Host header the "
    "server does not serve, or a malformed request line or header",
    401: "Unknown, revoked or missing agent key (and no login)",
    403: "Not allowed: the agent key may not act for users (or push events), a session user "
    "named someone else, or the user may not do this to this object",
    404: "Not found, or not visible to the acting user; also a user outside the key's tenant",
    409: "Conflicts with the current state",
    413: "The request body is larger than MAX_BODY_BYTES",
    414: "The request line (method, URL with its query, version) is longer than 8,190 bytes",
    415: "The uploaded file's type is not one the operation takes",
    422: "A field or parameter is missing, malformed or out of range",
    429: "Over the rate limit: retry after Retry-After seconds",
    431: "A header longer than 8,190 bytes, or more than 100 headers",
    503: "A service the call needs is unavailable; retry later",
}
# Errors only some operations return, by operation id, with the reason.
EMBEDDING_DOWN = "The embedding service failed, or EMBEDDING_DIM no longer matches the stored vectors"
OPERATION_ERRORS: dict[str, dict[int, str]] = {
    "memories_api_create_memory": {503: EMBEDDING_DOWN},
    "memories_api_update_memory": {
        409: "The memory cannot move to that scope (its author was deleted, or it is a compression summary)",
        503: EMBEDDING_DOWN,
    },
    "memories_api_search_memories": {503: EMBEDDING_DOWN},
    "memories_api_add_turn": {409: "The session has ended"},
    "wiki_api_search_pages": {503: EMBEDDING_DOWN},
    "almanac_context_api_build_context": {503: EMBEDDING_DOWN},
    "connectors_api_push_events": {
        503: "A concurrent write to the same containers (retry the batch), or " + EMBEDDING_DOWN
    },
    "skills_api_run_skill": {
        503: "The skill produced no result (a prompt skill without a working LLM); `run_id` names its record"
    },
    "documents_api_upload_document": {
        413: "The file is larger than DOCUMENT_MAX_BYTES (or the body than MAX_BODY_BYTES)",
        415: "The file is not a PDF, Markdown or plain text file (judged by its bytes, not its name)",
    },
    "connectors_api_slack_events": {
        401: "Missing, stale or invalid Slack signature",
        404: "No Slack source is configured for this workspace",
        409: "The workspace is claimed by more than one tenant's Slack source",
        503: "Slack events are not enabled (SLACK_SIGNING_SECRET is not set)",
    },
    "connectors_api_github_webhook": {
        401: "Invalid X-Hub-Signature-256",
        404: "No GitHub source is configured for this repository",
        409: "The repository is claimed by more than one tenant's GitHub source",
        503: "GitHub webhooks are not enabled (GITHUB_WEBHOOK_SECRET is not set)",
    },
}
BODY_METHODS = ("post", "put", "patch", "delete")  # config.middleware reads their bodies (413)


def operation_errors(method: str, operation: dict) -> dict[int, str]:
    """The error statuses an operation can return: those every call of its kind can meet
    (authentication, rate limit, body size, validation), plus OPERATION_ERRORS."""
    # Any call: too many query parameters, a value the database refuses, a foreign Host (400);
    # the web server's limits on the request line (414) and the headers (431).
    statuses = {400, 414, 431}
    if operation.get("security"):
        statuses |= {401, 403, 404, 422, 429}  # key, acting user, `user` required, rate limit
    if method in BODY_METHODS:
        statuses.add(413)
    if operation.get("parameters") or operation.get("requestBody"):
        statuses.add(422)
    extra = OPERATION_ERRORS.get(operation["operationId"], {})
    return {status: extra.get(status, ERROR_MEANINGS[status]) for status in sorted(statuses | set(extra))}


class AlmanacOpenAPISchema(OpenAPISchema):
    def add_schema_definitions(self, definitions: dict) -> None:
        # ninja keys components by class name: two schemas of one name would silently become
        # one, documenting an operation with another's shape. Refuse instead.
        for name, definition in definitions.items():
            if self.schemas.get(name, definition) != definition:
                raise ImproperlyConfigured(
                    f"two API schemas are named {name!r}: rename one (e.g. prefix it with its app)"
                )
        super().add_schema_definitions(definitions)


class AlmanacAPI(NinjaAPI):
    """NinjaAPI whose OpenAPI document keeps schema names unique and lists every operation's
    error statuses with the JSON error shape (docs/api.md, Errors)."""

    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        schema = AlmanacOpenAPISchema(self, path_prefix)
        components = schema["components"]["schemas"]
        components["Error"] = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
        for operations in schema["paths"].values():
            for method, operation in operations.items():
                responses = operation["responses"]
                for status, meaning in operation_errors(method, operation).items():
                    responses.setdefault(status, error_response(status, meaning))
        return schema


def error_response(status: int, meaning: str) -> dict:
    response = {
        "description": meaning,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if status == 429:
        response["headers"] = {
            "Retry-After": {"description": "Seconds until the window resets", "schema": {"type": "integer"}}
        }
    return response


api = AlmanacAPI(
    title="Almanac",
    version="1",
    urls_namespace="api",
    auth=api_auth,
    docs_url="/docs",
    parser=StrictParser(),
    throttle=[CallerRateThrottle()],
)

api.add_router("", "almanac.api.router")
api.add_router("/memories", "memories.api.router")
api.add_router("/sessions", "memories.api.sessions_router")
api.add_router("/wiki", "wiki.api.router")
api.add_router("/connectors", "connectors.api.router")
api.add_router("/context", "context.api.router")
api.add_router("/documents", "documents.api.router")
api.add_router("/skills", "skills.api.router")


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
