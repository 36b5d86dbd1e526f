"""The OpenAPI document tells the truth: schemathesis generates requests from it (valid and
invalid ones) and sends them to the app in-process (WSGI); every answer must be no 5xx, of
a documented status and content type, and match the documented schema.

Requests act for real users (`user` is mostly alice, bob or charlie) on real objects (a
memory, a session, a wiki page), with an agent key that may act for users and push events,
so the runs reach past the 404 of an unknown user; a second run sends them as alice's
logged-in browser does (session cookie and CSRF token). Bounded and deterministic: a fixed number
of examples per operation, derandomized, no example database.
"""

from __future__ import annotations

import collections
import contextlib
import itertools

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from almanac.services.keys import agentkey_create

pytestmark = pytest.mark.django_db
EXAMPLES = 30  # per operation, besides the cases schemathesis derives from the schema itself
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# Who a generated call acts for, in turn; None keeps what schemathesis generated.
USERS = itertools.cycle(["alice", "bob", "alice", "charlie", None])
STATUSES: collections.Counter = collections.Counter()
FAILED: list[str] = []

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


def _takes_user(operation) -> tuple[bool, bool]:
    """Whether the operation takes `user` as a query parameter, and in its JSON body."""
    definition = operation.definition.raw
    in_query = any(p.get("name") == "user" for p in definition.get("parameters", []))
    body = definition.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if "$ref" in body:
        body = schema.raw_schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    return in_query, "user" in body.get("properties", {})


def _act_for_real_users(case, real: dict) -> None:
    """Most calls act for a user of the tenant, on an object that exists."""
    in_query, in_body = _takes_user(case.operation)
    user = next(USERS)
    if user is not None:
        if in_body and isinstance(case.body, dict) and isinstance(case.body.get("user", ""), str | None):
            case.body["user"] = user
        elif in_query and isinstance(case.query, dict):
            case.query["user"] = user
    for name in list(case.path_parameters or {}):
        if name in real and user is not None:  # in turn with the generated value
            case.path_parameters[name] = real[name]


@pytest.fixture
def world(tenant, alice, bob, charlie, client, settings):
    """A memory and a session of alice's, a wiki page, a key that may do everything, and
    webhook secrets (without them a webhook is a 503, "not enabled")."""
    settings.SLACK_SIGNING_SECRET = settings.GITHUB_WEBHOOK_SECRET = "contract-secret"
    key = agentkey_create(tenant=tenant, name="contract", can_push_events=True)[1]
    headers = {"Authorization": f"Bearer {key}"}

    def post(path, body):
        response = client.post(f"/api/v1{path}", body, content_type="application/json", headers=headers)
        assert response.status_code in (200, 201, 202), response.content
        return response.json()

    memory = post("/memories", {"user": "alice", "content": "Vercel renews in March at 30k"})
    session = post("/sessions", {"user": "alice"})
    post(f"/sessions/{session['id']}/turns", {"role": "user", "content": "hi", "user": "alice"})
    event = {
        "source": "slack",
        "external_id": "C1/1700000000.000100",
        "kind": "message",
        "occurred_at": "2026-11-30T10:00:00Z",
        "container": {"key": "slack:channel:C1", "name": "#sales", "public": True},
        "author": "alice@acme.com",
        "text": "Vercel renewal call went well, they want SSO",
        "tags": {"customer": "Vercel"},
    }
    post("/connectors/events", event)
    real = {"memory_id": memory["id"], "session_id": session["id"], "slug": "vercel"}
    return headers, real


@contextlib.contextmanager
def _connection_kept():
    # The WSGI handler closes the database connection around each request, and the test's
    # transaction lives on it (Django's own test client steps around these the same way).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture(scope="module", autouse=True)
def _report(request):
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter and STATUSES:
        total = sum(STATUSES.values())
        by_status = ", ".join(f"{status}: {n}" for status, n in sorted(STATUSES.items()))
        reporter.write_line(f"schemathesis: {total} calls ({by_status}); {len(FAILED)} failed checks")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_answer_matches_the_document(case, world):
    headers, real = world
    _act_for_real_users(case, real)
    with _connection_kept():
        response = case.call(headers=headers)
    STATUSES[response.status_code] += 1
    try:
        case.validate_response(response, checks=CHECKS, headers=headers)
    except AssertionError:
        FAILED.append(f"{case.operation.label} {response.status_code}")
        raise


@pytest.fixture
def logged_in(alice, client):
    """A browser's credentials: alice's session cookie and a CSRF token in cookie and header."""
    from django.conf import settings as django_settings

    client.force_login(alice)
    session = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    token = "t" * 32
    return {django_settings.SESSION_COOKIE_NAME: session, "csrftoken": token}, {"X-CSRFToken": token}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES // 2,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_answer_matches_the_document_for_a_logged_in_user(case, world, logged_in):
    # The same contract for the web UI's own calls: a session cookie and a CSRF token instead
    # of an agent key (naming another user than alice is a documented 403).
    _headers, real = world
    cookies, headers = logged_in
    _act_for_real_users(case, real)
    if case.headers:
        case.headers.pop(
            "Authorization", None
        )  # generated from the bearer scheme: would step the login aside
    with _connection_kept():
        response = case.call(headers=headers, cookies=cookies)
    STATUSES[response.status_code] += 1
    try:
        case.validate_response(response, checks=CHECKS, headers=headers)
    except AssertionError:
        FAILED.append(f"{case.operation.label} {response.status_code} (session)")
        raise


def test_each_operation_is_documented_with_its_own_schemas(client):
    document = client.get("/api/v1/openapi.json").json()
    components = document["components"]["schemas"]

    def body_of(path):
        ref = document["paths"][f"/api/v1{path}"]["post"]["requestBody"]["content"]["application/json"]
        return components[ref["schema"]["$ref"].rsplit("/", 1)[1]]

    memory_search, wiki_search = body_of("/memories/search"), body_of("/wiki/search")
    assert "memory_types" in memory_search["properties"] and "memory_types" not in wiki_search["properties"]
    assert memory_search["properties"]["query"]["maxLength"] == 2000
    assert wiki_search["properties"]["query"]["maxLength"] == 4000


def test_two_schemas_of_one_name_are_refused():
    from django.core.exceptions import ImproperlyConfigured
    from ninja import Router, Schema
    from pydantic import create_model

    from config.api import AlmanacAPI

    def router_with(field: str) -> Router:
        searchin = create_model("SearchIn", __base__=Schema, **{field: (str, ...)})
        router = Router()

        def search(request, payload):
            return {}

        search.__annotations__ = {
            "payload": searchin
        }  # a class, not the string this module's annotations are
        router.post("/search")(search)
        return router

    api = AlmanacAPI(urls_namespace="twins")
    api.add_router("/a", router_with("query"))
    api.add_router("/b", router_with("memory_types"))
    with pytest.raises(ImproperlyConfigured, match="two API schemas are named 'SearchIn'"):
        api.get_openapi_schema(path_prefix="")


def test_every_operation_lists_its_errors_with_the_json_shape(client):
    document = client.get("/api/v1/openapi.json").json()
    error = {"$ref": "#/components/schemas/Error"}
    assert document["components"]["schemas"]["Error"]["required"] == ["detail"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            expected = {"400", "414", "431"}
            if operation.get("security"):
                expected |= {"401", "403", "404", "422", "429"}
            if method in ("post", "patch", "delete"):
                expected.add("413")
            assert expected <= set(responses), (method, path, sorted(responses))
            for status, response in responses.items():
                if int(status) >= 400 and path != "/api/v1/health":
                    assert response["content"]["application/json"]["schema"] == error, (method, path, status)
            if "429" in responses:
                assert "Retry-After" in responses["429"]["headers"]
    assert "409" in document["paths"]["/api/v1/sessions/{session_id}/turns"]["post"]["responses"]
    assert "503" in document["paths"]["/api/v1/memories/search"]["post"]["responses"]
