"""The Memories and Sessions endpoints of docs/api.md: status codes, fields, bad input, query counts."""

import pytest
from django.conf import settings

from memories.models import ConversationSession, Memory

pytestmark = pytest.mark.django_db

MEMORY_FIELDS = {
    "id", "memory_type", "scope", "scope_key", "content", "importance", "status", "access_count",
    "last_access", "quality", "schema_version", "meta", "created_at", "updated_at",
}  # fmt: skip


def create(api, **body):
    response = api.post("/memories", {"user": "alice", **body})
    assert response.status_code == 201, response.content
    return response.json()


def test_create_and_get(api, alice):
    body = create(api, content="Alice prefers aisle seats", importance=0.8, meta={"tags": ["travel"]})
    assert set(body) >= MEMORY_FIELDS
    assert (body["scope"], body["scope_key"], body["memory_type"], body["importance"]) == (
        "user",
        "alice",
        "semantic",
        0.8,
    )
    got = api.get(f"/memories/{body['id']}", user="alice").json()
    assert got["content"] == "Alice prefers aisle seats" and got["meta"] == {"tags": ["travel"]}


def test_create_project_scope_by_name(api, alice, bob):
    body = create(api, content="Apollo 的上线日期是 3 月 12 日", scope="project", scope_key="Apollo", memory_type="episodic",
                  occurred_at="2026-03-12")  # fmt: skip
    assert (body["scope"], body["scope_key"], body["occurred_at"]) == ("project", "apollo", "2026-03-12")
    assert api.get(f"/memories/{body['id']}", user="bob").status_code == 200


def test_list_filters_and_pagination(api, alice):
    for i in range(5):
        create(
            api, content=f"distinct fact number {i}: {'apples pears plums'.split()[i % 3]} orchard {i * 37}"
        )
    create(api, content="Apollo 上线会议在 3 月 12 日", memory_type="episodic")
    page = api.get("/memories", user="alice", limit=2, offset=1).json()
    assert page["count"] == 6 and len(page["items"]) == 2
    episodic = api.get("/memories", user="alice", memory_type="episodic").json()
    assert [m["memory_type"] for m in episodic["items"]] == ["episodic"]
    found = api.get("/memories", user="alice", q="上线会议").json()
    assert found["items"][0]["memory_type"] == "episodic"
    assert api.get("/memories", user="alice", status="archived").json()["count"] == 0


def test_patch_content_reembeds_and_reindexes(api, alice):

    from memories import selectors

    body = create(api, content="The Apollo launch is in March")
    response = api.patch(
        f"/memories/{body['id']}", {"user": "alice", "content": "Zephyr 的发布改到 6 月", "importance": 0.9}
    )
    assert response.status_code == 200 and response.json()["importance"] == 0.9
    assert selectors.memory_search(user=alice, query="Zephyr 发布", top_k=1)[0].memory.pk == body["id"]
    assert api.get("/memories", user="alice", q="Apollo launch").json()["count"] == 0
    memory = Memory.objects.get(pk=body["id"])
    assert memory.history.first().history_change_reason == "api"
    assert memory.history.first().history_user == alice


def test_patch_scope_recomputes_acl(api, alice, bob, charlie):
    body = create(api, content="Apollo pricing floor is 30%")
    assert api.get(f"/memories/{body['id']}", user="bob").status_code == 404
    response = api.patch(
        f"/memories/{body['id']}", {"user": "alice", "scope": "project", "scope_key": "Apollo"}
    )
    assert response.status_code == 200 and Memory.objects.get(pk=body["id"]).acl == ["project:apollo"]
    assert api.get(f"/memories/{body['id']}", user="bob").status_code == 200
    assert (
        api.patch(
            f"/memories/{body['id']}", {"user": "alice", "scope": "project", "scope_key": "Zephyr"}
        ).status_code
        == 403
    )


def test_patch_status_archives(api, alice):
    body = create(api, content="an outdated preference for fax")
    assert (
        api.patch(f"/memories/{body['id']}", {"user": "alice", "status": "archived"}).json()["status"]
        == "archived"
    )
    assert api.get("/memories", user="alice").json()["count"] == 0
    assert api.get(f"/memories/{body['id']}", user="alice").status_code == 200


def test_patch_corrects_an_episodic_memory_s_day(api, alice):
    body = create(api, content="Met the Vercel CTO", memory_type="episodic", occurred_at="2026-11-18")
    patched = api.patch(f"/memories/{body['id']}", {"user": "alice", "content": "Met the Vercel CTO on 2026-11-19",
                                                    "occurred_at": "2026-11-19"}).json()  # fmt: skip
    assert patched["occurred_at"] == "2026-11-19" and Memory.objects.get(pk=body["id"]).occurred_at.day == 19


def test_non_owner_member_may_read_not_change(api, alice, bob):
    body = create(api, content="Apollo uses Postgres", scope="project", scope_key="Apollo")
    assert api.patch(f"/memories/{body['id']}", {"user": "bob", "importance": 0.1}).status_code == 403
    assert api.delete(f"/memories/{body['id']}", user="bob").status_code == 403


def test_delete_by_owner_and_by_governor(api, alice, bob):
    from guardian.shortcuts import assign_perm

    mine = create(api, content="delete me please, I am obsolete")
    assert api.delete(f"/memories/{mine['id']}", user="alice").status_code == 204
    assert api.get(f"/memories/{mine['id']}", user="alice").status_code == 404
    shared = create(api, content="Apollo shared memory to govern", scope="project", scope_key="Apollo")
    assign_perm("memories.delete_memory", bob, Memory.objects.get(pk=shared["id"]))
    assert api.delete(f"/memories/{shared['id']}", user="bob").status_code == 204


def test_search_endpoint(api, alice):
    create(api, content="The PRD-2024-013 spec covers the Apollo billing export.")
    create(api, content="我喜欢喝美式咖啡，不加糖。")
    body = api.post("/memories/search", {"user": "alice", "query": "PRD-2024-013", "top_k": 1}).json()
    assert len(body["results"]) == 1
    result = body["results"][0]
    assert result["memory"]["content"].startswith("The PRD-2024-013")
    assert set(result["breakdown"]) >= {
        "vector_rank",
        "keyword_rank",
        "rrf",
        "importance",
        "recency",
        "quality",
    }
    assert result["score"] > 0


def test_feedback_endpoint(api, alice):
    body = create(api, content="Alice likes short answers")
    response = api.post(f"/memories/{body['id']}/feedback", {"user": "alice", "signal": "adopted"})
    assert response.status_code == 200
    assert response.json()["quality"] > response.json()["quality_before"] == 1.0


def test_session_flow(api, alice):
    created = api.post("/sessions", {"user": "alice"})
    assert created.status_code == 201
    sid = created.json()["id"]
    turn = api.post(
        f"/sessions/{sid}/turns", {"user": "alice", "role": "user", "content": "我喜欢喝美式咖啡"}
    )
    assert turn.status_code == 201 and turn.json()["tokens"] > 0
    # An agent key may address the session without naming the user again (docs/api.md, Sessions).
    assert api.post(f"/sessions/{sid}/turns", {"role": "assistant", "content": "好的"}).status_code == 201
    window = api.get(f"/sessions/{sid}/window", user="alice").json()
    assert [t["role"] for t in window["turns"]] == ["user", "assistant"] and window["tokens"] > 0
    assert api.post(f"/sessions/{sid}/end", {"user": "alice"}).status_code == 202
    assert api.post(f"/sessions/{sid}/end").status_code == 202  # again: idempotent
    assert (
        api.post(f"/sessions/{sid}/turns", {"user": "alice", "role": "user", "content": "x"}).status_code
        == 409
    )


BAD_MEMORY_BODIES = [
    {"content": ""},
    {"content": "   "},
    {"content": "nul \x00 byte"},
    {"content": "x" * 20001},
    {"content": "ok fact", "memory_type": "procedural"},
    {"content": "ok fact", "scope": "world"},
    {"content": "ok fact", "importance": 1.5},
    {"content": "ok fact", "importance": "high"},
    {"content": "ok fact", "scope": "dept", "scope_key": "no-such-dept"},
    {"content": "ok fact", "scope": "project", "scope_key": "Zephyr"},  # not a member
    {"content": "ok fact", "unknown_field": 1},
    {"content": "ok fact", "meta": {"big": "x" * 20000}},
    {"content": "ok fact", "meta": {"nul": "\x00"}},
    {"content": "ok fact", "occurred_at": "yesterday-ish"},
    {"content": 12},
]


@pytest.mark.parametrize("body", BAD_MEMORY_BODIES)
def test_create_bad_input(api, alice, body):
    response = api.post("/memories", {"user": "alice", **body})
    assert 400 <= response.status_code < 500, response.content
    assert "detail" in response.json()
    assert not Memory.objects.exists()


def test_missing_user_with_agent_key_is_422(api, alice):
    assert api.post("/memories", {"content": "a fact"}).status_code == 422


@pytest.mark.parametrize(
    "params",
    [{"limit": -1}, {"limit": 0}, {"limit": 10_000}, {"offset": -5}, {"memory_type": "x"}, {"status": "gone"},
     {"scope": "world"}, {"limit": "ten"}],
)  # fmt: skip
def test_list_bad_input(api, alice, params):
    response = api.get("/memories", user="alice", **params)
    assert response.status_code == 422 and "detail" in response.json()


@pytest.mark.parametrize(
    "body",
    [{}, {"query": ""}, {"query": "x" * 2001}, {"query": "a", "top_k": 0}, {"query": "a", "top_k": -1},
     {"query": "a", "top_k": 1000}, {"query": "a", "memory_types": ["dream"]}, {"query": "a", "extra": 1}],
)  # fmt: skip
def test_search_bad_input(api, alice, body):
    response = api.post("/memories/search", {"user": "alice", **body})
    assert response.status_code == 422 and "detail" in response.json()


@pytest.mark.parametrize(
    "body",
    [{"content": ""}, {"content": "\x00"}, {"importance": -0.1}, {"status": "deleted"}, {"scope": "galaxy"},
     {"scope": "dept", "scope_key": "Nowhere"}, {"id": 5}, {"occurred_at": "2026-11-19"},
     {"occurred_at": "yesterday"}],
)  # fmt: skip
def test_patch_bad_input(api, alice, body):
    memory = create(api, content="a fact to patch badly")
    response = api.patch(f"/memories/{memory['id']}", {"user": "alice", **body})
    assert 400 <= response.status_code < 500 and "detail" in response.json()
    assert Memory.objects.get(pk=memory["id"]).content == "a fact to patch badly"


@pytest.mark.parametrize("body", [{}, {"signal": "loved"}, {"signal": "adopted", "extra": 1}])
def test_feedback_bad_input(api, alice, body):
    memory = create(api, content="a fact to rate")
    response = api.post(f"/memories/{memory['id']}/feedback", {"user": "alice", **body})
    assert response.status_code == 422 and "detail" in response.json()


def test_bad_ids_are_4xx(api, alice):
    assert api.get("/memories/abc", user="alice").status_code in (404, 422)
    assert api.get("/memories/999999999", user="alice").status_code == 404
    assert api.get("/sessions/abc/window", user="alice").status_code in (404, 422)
    assert api.get("/sessions/999999/window", user="alice").status_code == 404


@pytest.mark.parametrize(
    "body",
    [{"role": "system", "content": "x"}, {"role": "user", "content": ""}, {"role": "user", "content": "\x00"},
     {"role": "user"}, {"content": "x"}, {"role": "user", "content": "x", "extra": 1},
     {"role": "user", "content": "x" * 200_001}],
)  # fmt: skip
def test_turn_bad_input(api, alice, body):
    sid = api.post("/sessions", {"user": "alice"}).json()["id"]
    response = api.post(f"/sessions/{sid}/turns", {"user": "alice", **body})
    assert 400 <= response.status_code < 500 and "detail" in response.json()


@pytest.mark.parametrize(
    "body",
    [{"user": "alice", "title": "x" * 301}, {"user": "alice", "title": "\x00"}, {"user": "alice", "x": 1}],
)
def test_session_create_bad_input(api, alice, body):
    response = api.post("/sessions", body)
    assert 400 <= response.status_code < 500 and "detail" in response.json()


def test_unauthenticated_is_401(client, alice):
    assert client.get("/api/v1/memories", {"user": "alice"}).status_code == 401
    bad = client.get("/api/v1/memories", {"user": "alice"}, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401


def test_list_query_count_is_constant(api, alice, django_assert_num_queries):
    for i in range(3):
        create(api, content=f"list query fact {i} about {['tea', 'trains', 'tulips'][i]}")
    # auth (key + touch-free) + acting user + access keys + memory list + count
    with django_assert_num_queries(5):
        assert api.get("/memories", user="alice", limit=10).json()["count"] == 3
    for i in range(10):
        create(api, content=f"another batch fact {i} on subject {i * 991} kiwi {i}")
    with django_assert_num_queries(5):
        assert api.get("/memories", user="alice", limit=50).json()["count"] == 13


EXTRA = [
    ["Carol owns the billing service", "我们下周去杭州出差", "The VPN password rotates monthly"],
    ["Dave 喜欢用 Vim 写代码", "Quarterly review is in the big room", "报销需要在月底前提交"],
]


def test_search_query_count_is_constant(alice, remember, django_assert_num_queries):
    from memories import selectors

    for text in ("tea with lemon", "window seat on trains", "morning standups", "PRD-2024-013 billing"):
        remember(alice, text)
    selectors.memory_search(user=alice, query="warm-up: loads the embedding model")
    # access keys, BM25 stats (and corpus size), keyword lane, vector lane, fetch of the fused rows.
    for batch in range(2):
        user = type(alice).objects.get(pk=alice.pk)
        with django_assert_num_queries(5):
            hits = selectors.memory_search(user=user, query="trains and tea", top_k=3)
        assert len(hits) == 3
        for text in EXTRA[batch]:
            remember(alice, text)


def test_a_session_for_the_user_in_the_query_needs_no_body(api, alice):
    for body in [None, b""]:
        response = api.client.post(
            "/api/v1/sessions?user=alice", body, content_type="application/json", headers=api.headers
        )
        assert response.status_code == 201, response.content
    assert ConversationSession.objects.filter(user=alice).count() == 2


@pytest.mark.parametrize(
    "body",
    [
        {"content": "scope key test", "scope": "user", "scope_key": "bob"},
        {"content": "scope key test", "scope": "tenant", "scope_key": "globex"},
    ],
)
def test_a_scope_key_that_does_not_fit_the_scope_is_refused(api, alice, bob, body):
    response = api.post("/memories", {"user": "alice", **body})
    assert response.status_code == 422 and "scope_key must be" in response.json()["detail"]
    assert not Memory.objects.exists()
    ok = api.post(
        "/memories", {"user": "alice", **body, "scope_key": "alice" if body["scope"] == "user" else None}
    )
    assert ok.status_code == 201 and ok.json()["scope_key"] in {"alice", alice.profile.tenant.slug}


def test_a_scope_key_of_another_user_is_refused_on_update_too(api, alice, bob):
    created = api.post("/memories", {"user": "alice", "content": "Alice drinks green tea"}).json()
    response = api.patch(f"/memories/{created['id']}", {"user": "alice", "scope": "user", "scope_key": "bob"})
    assert response.status_code == 422
    assert Memory.objects.get(pk=created["id"]).scope_key == "alice"


def test_content_over_the_limit_is_a_422(api, alice):
    response = api.post(
        "/memories", {"user": "alice", "content": "x" * (settings.MEMORY_MAX_CONTENT_CHARS + 1)}
    )
    assert response.status_code == 422 and "too long" in response.json()["detail"]


def test_patch_refuses_status_compressed(api, alice):
    memory = create(api, content="Apollo ships on Fridays")
    response = api.patch(f"/memories/{memory['id']}", {"user": "alice", "status": "compressed"})
    assert response.status_code == 422 and "compression" in response.content.decode()
    assert Memory.objects.get(pk=memory["id"]).status == "active"


def test_user_may_be_a_query_parameter_on_body_endpoints(api, alice, bob):
    memory = create(api, content="Alice prefers aisle seats on long flights")
    response = api.patch(f"/memories/{memory['id']}?user=alice", {"importance": 0.9})
    assert response.status_code == 200 and response.json()["importance"] == 0.9
    assert api.post("/memories/search?user=alice", {"query": "aisle seats"}).status_code == 200
    feedback = api.post(f"/memories/{memory['id']}/feedback?user=alice", {"signal": "adopted"})
    assert feedback.status_code == 200
    # The body's `user` wins (bob may not see alice's memory); unknown: 404; none: 422.
    assert (
        api.patch(f"/memories/{memory['id']}?user=alice", {"user": "bob", "importance": 0.1}).status_code
        == 404
    )
    assert api.patch(f"/memories/{memory['id']}?user=nobody", {"importance": 0.1}).status_code == 404
    assert api.patch(f"/memories/{memory['id']}", {"importance": 0.1}).status_code == 422


def test_session_turns_take_user_from_the_query(api, alice):
    session = api.post("/sessions", {"user": "alice"}).json()
    assert (
        api.post(f"/sessions/{session['id']}/turns?user=alice", {"role": "user", "content": "hi"}).status_code
        == 201
    )
    assert (
        api.post(f"/sessions/{session['id']}/turns?user=bob", {"role": "user", "content": "hi"}).status_code
        == 404
    )
