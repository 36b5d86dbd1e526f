"""Bad input on every endpoint: a 4xx JSON reply with a detail, never a 500."""

import pytest

pytestmark = pytest.mark.django_db
BIG = 10**20
CASES = [
    ("get", "/memories", {"user": "alice", "limit": -1}),
    ("get", "/memories", {"user": "alice", "limit": "abc"}),
    ("get", "/memories", {"user": "alice", "offset": BIG}),
    ("get", "/memories", {"user": "alice", "memory_type": "nope"}),
    ("get", f"/memories/{BIG}", {"user": "alice"}),
    ("get", "/memories/abc", {"user": "alice"}),
    ("post", "/memories", {"user": "alice", "content": "x" * 100000}),
    ("post", "/memories", {"user": "alice", "content": "ok content", "importance": 1e308}),
    ("post", "/memories", {"user": "alice", "content": "ok content", "importance": "NaN"}),
    ("post", "/memories", {"user": "alice", "content": "ok content", "scope": "dept", "scope_key": "nope"}),
    ("post", "/memories", {"user": "alice", "content": "ok content", "meta": "notadict"}),
    ("post", "/memories", {"user": ["alice"], "content": "x"}),
    ("post", "/memories", []),
    ("post", "/memories/search", {"user": "alice", "query": "", "top_k": 10}),
    ("post", "/memories/search", {"user": "alice", "query": "x" * 50000, "top_k": 10}),
    ("post", "/memories/search", {"user": "alice", "query": "hi", "top_k": BIG}),
    ("post", "/memories/search", {"user": "alice", "query": "hi", "memory_types": ["bad"]}),
    ("post", f"/memories/{BIG}/feedback", {"user": "alice", "signal": "adopted"}),
    ("post", "/memories/1/feedback", {"user": "alice", "signal": "meh"}),
    ("patch", f"/memories/{BIG}", {"user": "alice", "content": "x"}),
    ("delete", f"/memories/{BIG}", {"user": "alice"}),
    ("post", "/sessions", {"user": "alice", "extra": 1}),
    ("post", f"/sessions/{BIG}/turns", {"user": "alice", "role": "user", "content": "hi"}),
    ("post", "/sessions/1/turns", {"user": "alice", "role": "robot", "content": "hi"}),
    ("get", f"/sessions/{BIG}/window", {"user": "alice"}),
    ("post", f"/sessions/{BIG}/end", {"user": "alice"}),
    ("get", "/wiki/pages", {"user": "alice", "kind": "bad"}),
    ("get", "/wiki/pages", {"user": "alice", "q": "\x00"}),
    ("get", "/wiki/pages/%00", {"user": "alice"}),
    ("get", "/wiki/pages/" + "a" * 5000, {"user": "alice"}),
    ("post", "/wiki/search", {"user": "alice", "query": "x", "top_k": -3}),
    ("post", "/wiki/search", {"user": "alice", "query": "\x00"}),
    ("post", "/wiki/pages/x/confirm", {"user": "alice", "section_ids": [BIG]}),
    ("post", "/wiki/pages/x/confirm", {"user": "alice", "section_ids": "1"}),
    ("post", "/context", {"user": "alice", "task": "hi", "max_tokens": BIG}),
    ("post", "/context", {"user": "alice", "task": "hi", "cursor": "garbage"}),
    ("post", "/context", {"user": "alice", "task": "hi", "session_id": BIG}),
    ("post", "/context", {"user": "alice", "task": "hi", "lang": "fr"}),
    ("post", "/context", {"user": "alice", "task": "\x00"}),
    ("post", "/connectors/events", {"source": "x"}),
    ("get", "/me", {"user": "\x00"}),
]


def test_every_endpoint_answers_bad_input_with_a_4xx_json_detail(api, alice):
    bad = []
    for method, path, body in CASES:
        if method == "get":
            r = api.get(path, **body)
        elif method == "delete":
            r = api.delete(path, **body)
        else:
            r = getattr(api, method)(path, body)
        is_json = r["Content-Type"].startswith("application/json")
        if not (400 <= r.status_code < 500 and is_json and "detail" in r.json()):
            bad.append((method, path[:60], r.status_code, r.content[:200]))
    assert not bad, bad


SURROGATE = "\ud800"  # json.dumps writes it as the escape "\ud800": valid JSON, not valid text
SURROGATE_CASES = [
    ("post", "/memories", {"user": SURROGATE, "content": "ok content"}),
    ("post", "/memories", {"user": "alice", "content": f"ok {SURROGATE} content"}),
    ("patch", "/memories/1", {"user": "alice", "content": SURROGATE}),
    ("post", "/memories/search", {"user": "alice", "query": SURROGATE}),
    ("post", "/sessions", {"user": SURROGATE}),
    ("post", "/context", {"user": "alice", "task": f"Vercel {SURROGATE}"}),
    ("post", "/context", {"user": "alice", "task": "Vercel", SURROGATE: 1}),
]


def test_lone_surrogates_and_deep_nesting_are_refused_before_anything_runs(api, alice, connector_key):
    from memories.models import Memory, Turn

    bad = []
    for method, path, body in SURROGATE_CASES:
        r = getattr(api, method)(path, body)
        if r.status_code != 400 or "surrogate" not in r.json()["detail"]:
            bad.append((method, path, r.status_code, r.content[:200]))
    deep = "[" * 5000 + "1" + "]" * 5000
    for path in ["/memories", "/context", "/sessions", "/connectors/events"]:
        r = api.client.post(
            f"/api/v1{path}",
            deep,
            content_type="application/json",
            headers={"Authorization": f"Bearer {connector_key}"},
        )
        if r.status_code != 400 or "nested deeper" not in r.json()["detail"]:
            bad.append(("post", path, r.status_code, r.content[:200]))
    event = {"source": "slack", "external_id": "e1", "kind": "message", "occurred_at": "2026-11-30T10:00:00Z"}
    event |= {"container": {"key": "slack:channel:C1", "members": [SURROGATE]}, "text": "hi"}
    r = api.client.post(
        "/api/v1/connectors/events",
        event,
        content_type="application/json",
        headers={"Authorization": f"Bearer {connector_key}"},
    )
    if r.status_code != 400:
        bad.append(("post", "/connectors/events", r.status_code, r.content[:200]))
    assert not bad, bad
    assert not Memory.objects.exists() and not Turn.objects.exists()


def test_a_valid_surrogate_pair_is_text_and_accepted(api, alice):
    r = api.client.post(
        "/api/v1/memories",
        '{"user": "alice", "content": "Alice likes \\ud83d\\ude00 in release notes"}',
        content_type="application/json",
        headers=api.headers,
    )
    assert r.status_code == 201, r.content
    assert r.json()["content"] == "Alice likes 😀 in release notes"


def test_unrouted_api_paths_answer_json_404(api, alice):
    for method, path in [
        ("get", "/wiki/pages/%2F"),
        ("post", "/wiki/pages/%2F/confirm"),
        ("post", "/memories/"),
    ]:
        r = getattr(api.client, method)(f"/api/v1{path}", headers=api.headers)
        assert r.status_code == 404 and r.json()["detail"].startswith("no such endpoint"), (
            path,
            r.content[:100],
        )
    assert api.client.get("/api/v2/health").json()["detail"] == "no such endpoint: GET /api/v2/health"


def test_a_wrong_method_on_an_api_path_is_a_json_405(api, alice):
    for method, path, allowed in [
        ("get", "/memories/search", "POST"),
        ("delete", "/context", "POST"),
        ("put", "/health", "GET"),
    ]:
        r = getattr(api.client, method)(f"/api/v1{path}", headers=api.headers)
        assert r.status_code == 405, (method, path, r.status_code)
        assert r["Content-Type"] == "application/json", (method, path, r.content[:100])
        assert (
            r.json()["detail"] == f"method not allowed: {method.upper()} /api/v1{path} (allowed: {allowed})"
        )
        assert r["Allow"] == allowed


def test_a_body_over_the_limit_is_a_json_413_and_too_many_query_fields_a_json_400(api, alice, settings):
    from memories.models import Memory

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    r = api.post("/memories", {"user": "alice", "content": "x" * 2000})
    assert r.status_code == 413 and r.json()["detail"] == "the request body is larger than 1000 bytes"
    assert not Memory.objects.exists()
    assert api.post("/memories", {"user": "alice", "content": "small enough"}).status_code == 201
    query = "&".join(["user=alice"] + [f"f{i}=1" for i in range(1001)])
    r = api.client.get(f"/api/v1/memories?{query}", headers=api.headers)
    assert r.status_code == 400 and r.json()["detail"] == "more than 1000 query parameters"


def test_a_form_post_from_a_logged_in_browser_is_a_json_400(alice):
    # The session login's CSRF check reads a form body as a form; the JSON parser must still
    # get to refuse it (it used to fail on the consumed stream: a 500).
    from django.test import Client

    from memories.models import Memory

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    browser.cookies["csrftoken"] = "c" * 32
    for path in ["/memories", "/context", "/sessions", "/wiki/search"]:
        r = browser.post(
            f"/api/v1{path}", {"user": "alice", "content": "x"}, headers={"X-CSRFToken": "c" * 32}
        )
        assert r.status_code == 400, (path, r.status_code, r.content[:200])
        assert r.json()["detail"] == "the body must be JSON (UTF-8)"
    assert not Memory.objects.exists()


def test_a_post_to_no_endpoint_is_a_json_404_not_a_csrf_page(agent_key):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    for method in ("post", "delete", "patch"):
        r = getattr(browser, method)(
            "/api/v1/memories/1/archive", headers={"Authorization": f"Bearer {agent_key}"}
        )
        assert r.status_code == 404, (method, r.status_code, r.content[:100])
        assert r.json()["detail"] == f"no such endpoint: {method.upper()} /api/v1/memories/1/archive"


def test_json_values_postgres_cannot_store_are_a_422_naming_the_field(api, alice, connector_key):
    from connectors.models import Event
    from memories.models import Memory

    nul, infinite = {"k": "a\x00b"}, {"k": 1e400}
    for meta, reason in [(nul, "NUL"), ({"a\x00": 1}, "NUL"), (infinite, "not finite")]:
        r = api.post("/memories", {"user": "alice", "content": "ok content", "meta": meta})
        assert r.status_code == 422 and "meta contains" in str(r.json()["detail"]) and reason in r.text, (
            r.text
        )
    assert not Memory.objects.exists()
    memory_id = api.post("/memories", {"user": "alice", "content": "ok content"}).json()["id"]
    assert api.patch(f"/memories/{memory_id}", {"user": "alice", "meta": infinite}).status_code == 422
    assert Memory.objects.get(pk=memory_id).meta == {}

    def push(raw):
        event = {"source": "slack", "external_id": f"e{len(raw)}", "kind": "message", "text": "hi"}
        event |= {"occurred_at": "2026-11-30T10:00:00Z", "container": {"key": "slack:channel:C1"}, "raw": raw}
        return api.client.post(
            "/api/v1/connectors/events",
            event,
            content_type="application/json",
            headers={"Authorization": f"Bearer {connector_key}"},
        )

    for raw in ({"x": 1e400}, {"x": "\x00"}):
        r = push(raw)
        assert r.status_code == 422 and r.json()["detail"].startswith(
            "events[0]: invalid event: raw contains"
        )
    assert not Event.objects.exists()
    # The six characters \u0000 are text, not a NUL: accepted.
    assert push({"x": "\\u0000", "y": 2**70}).status_code == 202


def test_a_write_without_key_or_login_is_a_401_not_a_csrf_failure(db):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    for path in ["/memories", "/context", "/sessions"]:
        r = browser.post(f"/api/v1{path}", {"user": "alice"}, content_type="application/json")
        assert r.status_code == 401 and r.json()["detail"] == "invalid or missing agent key", r.content


def test_a_tool_turn_quoting_a_lone_surrogate_escape_is_kept_as_text(api, alice):
    # The turn is valid text (a backslash, then "ud800"); the JSON list it holds decodes to
    # a lone surrogate, which shortening the list used to write back raw: a 500.
    from memories.models import Turn

    session = api.post("/sessions", {"user": "alice"}).json()["id"]
    content = "[" + ", ".join(f'"\\ud800 item {i}"' for i in range(60)) + "]"
    r = api.post(f"/sessions/{session}/turns", {"user": "alice", "role": "tool", "content": content})
    assert r.status_code == 201, r.content
    stored = Turn.objects.get(session_id=session, role="tool").content
    assert stored.startswith('["\\ud800 item 0", ') and stored.endswith("… and 10 more")


@pytest.mark.parametrize("day", ["0001-01-01", "1899-12-31", "3000-01-01", "9999-12-31"])
def test_a_memory_dated_outside_1900_to_2999_is_a_422(api, alice, day):
    from memories.models import Memory

    body = {"user": "alice", "content": "Lunch with Dave", "memory_type": "episodic", "occurred_at": day}
    r = api.post("/memories", body)
    assert r.status_code == 422, r.content
    assert "occurred_at must lie between the years 1900 and 2999" in str(r.json()["detail"])
    assert not Memory.objects.exists()
    memory_id = api.post("/memories", {**body, "occurred_at": "2025-03-12"}).json()["id"]
    r = api.patch(f"/memories/{memory_id}", {"user": "alice", "occurred_at": day})
    assert r.status_code == 422 and "between the years 1900 and 2999" in str(r.json()["detail"])
    assert str(Memory.objects.get(pk=memory_id).occurred_at) == "2025-03-12"


def test_the_ends_of_the_range_are_accepted(api, alice):
    for day in ("1900-01-01", "2999-12-31"):
        body = {"user": "alice", "content": f"Signed on {day}", "memory_type": "episodic", "occurred_at": day}
        r = api.post("/memories", body)
        assert r.status_code == 201 and r.json()["occurred_at"] == day, r.content


def test_the_memory_services_refuse_an_out_of_range_date_too(alice):
    from datetime import date

    from almanac.errors import ApplicationError
    from memories.models import Memory
    from memories.services.memories import memory_create, memory_update

    with pytest.raises(ApplicationError, match="between the years 1900 and 2999") as refused:
        memory_create(
            owner=alice, content="Lunch with Dave", memory_type="episodic", occurred_at=date(1, 1, 1)
        )
    assert refused.value.status_code == 422
    memory, _ = memory_create(
        owner=alice, content="Lunch with Dave", memory_type="episodic", occurred_at=date(2025, 3, 12)
    )
    with pytest.raises(ApplicationError, match="between the years 1900 and 2999"):
        memory_update(memory=memory, user=alice, data={"occurred_at": date(3000, 1, 1)})
    assert Memory.objects.get(pk=memory.pk).occurred_at == date(2025, 3, 12)


def _api_operations(client) -> list[tuple[str, str]]:
    """(method, path) of every operation in the OpenAPI document, real ids in the path."""
    document = client.get("/api/v1/openapi.json").json()
    return [
        (method, path.replace("{session_id}", "1").replace("{memory_id}", "1").replace("{slug}", "x"))
        for path, operations in document["paths"].items()
        for method in operations
    ]


@pytest.mark.parametrize(
    "content_type",
    ["multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=x"],
)
def test_a_malformed_multipart_body_from_a_logged_in_browser_is_a_json_4xx(
    alice, client, settings, content_type
):
    # The session's CSRF check reads the body as a form; a multipart body without a valid
    # boundary used to crash it (a 500). Now it parses as an empty form, and the API answers
    # as it answers an agent key sending the same body.
    from django.test import Client

    from memories.models import Memory

    settings.SLACK_SIGNING_SECRET = settings.GITHUB_WEBHOOK_SECRET = "secret"  # else a 503, "not enabled"
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    browser.cookies["csrftoken"] = "c" * 32
    body = b"--x\r\nContent-Disposition: form-data; name=user\r\n\r\nalice\r\n"
    operations = [(m, p) for m, p in _api_operations(client) if m in ("post", "patch", "delete")]
    assert len(operations) >= 10
    for method, path in operations:
        r = browser.generic(
            method.upper(), path, body, content_type=content_type, headers={"X-CSRFToken": "c" * 32}
        )
        assert 400 <= r.status_code < 500, (method, path, r.status_code, r.content[:200])
        assert r["Content-Type"].startswith("application/json"), (method, path, r.content[:200])
        assert r.json()["detail"]
    assert not Memory.objects.exists()


@pytest.mark.parametrize("debug", [True, False])
def test_a_host_the_server_does_not_serve_is_a_json_400_on_api_paths(client, settings, debug):
    settings.DEBUG = debug
    settings.ALLOWED_HOSTS = ["almanac.example"]
    for method, path in _api_operations(client.__class__(HTTP_HOST="almanac.example")) + [
        ("get", "/api/v1/nowhere")
    ]:
        r = client.generic(
            method.upper(), path, b"{}", content_type="application/json", HTTP_HOST="evil.example"
        )
        assert r.status_code == 400, (method, path, r.status_code)
        assert r["Content-Type"].startswith("application/json"), (method, path, r.content[:200])
        assert r.json() == {"detail": "the Host header names a host this server does not serve"}
    served = client.get("/api/v1/health", HTTP_HOST="almanac.example")
    assert served.status_code == 200, served.content
