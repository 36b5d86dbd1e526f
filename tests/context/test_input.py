"""Bad input is a clear 4xx, never a 500."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"task": ""}, 422),
        ({"task": "   \n\t "}, 422),
        ({"task": "x" * 8001}, 422),
        ({"task": "nul \x00 byte"}, 422),
        ({"task": "ok", "max_tokens": 0}, 422),
        ({"task": "ok", "max_tokens": -5}, 422),
        ({"task": "ok", "max_tokens": 10_000_000}, 422),
        ({"task": "ok", "max_tokens": "many"}, 422),
        ({"task": "ok", "max_tokens": True}, 422),
        ({"task": "\u200b\u200b \ufeff"}, 422),  # only zero-width characters
        ({"task": "ok", "lang": "fr"}, 422),
        ({"task": "ok", "unknown_field": 1}, 422),
        ({"task": "ok", "session_id": "abc"}, 422),
        ({"task": "ok", "cursor": "not-a-cursor"}, 400),
        ({"task": "ok", "user": "nobody"}, 404),
        ({"task": "ok", "user": "mallory"}, 404),
        ({"task": "ok", "session_id": 999999}, 404),
    ],
)
def test_bad_input_is_refused(api, alice, mallory, body, status):
    body = {"user": "alice", **body}
    response = api.post("/context", body)
    assert response.status_code == status, response.content
    assert "detail" in response.json()


def test_task_too_long_says_the_limit(api, alice):
    response = api.post("/context", {"user": "alice", "task": "x" * 9000})
    assert "8000" in str(response.json()["detail"])


def test_user_is_required_with_an_agent_key(api, alice):
    assert api.post("/context", {"task": "ok"}).status_code == 422


def test_unknown_key_is_401(client, alice):
    response = client.post(
        "/api/v1/context",
        {"user": "alice", "task": "ok"},
        content_type="application/json",
        headers={"Authorization": "Bearer nope"},
    )
    assert response.status_code == 401


def test_session_of_another_user_is_404(api, alice, bob):
    from memories.services.sessions import session_create

    session = session_create(user=bob)
    assert api.post("/context", {"user": "alice", "task": "ok", "session_id": session.pk}).status_code == 404


def test_empty_corpus_gives_an_empty_prompt(api, alice):
    data = api.post("/context", {"user": "alice", "task": "anything at all"}).json()
    assert data["prompt"] == "" and data["blocks"] == [] and data["budget"]["used"] == 0
    assert data["next_cursor"] is None


def test_a_signed_cursor_with_unusable_ids_is_a_400(api, alice):
    from django.core import signing

    from context.cursor import SALT, task_digest

    token = signing.dumps(
        {"u": alice.pk, "t": task_digest("ok"), "p": [float("inf")]}, salt=SALT, compress=True
    )
    response = api.post("/context", {"user": "alice", "task": "ok", "cursor": token})
    assert response.status_code == 400 and response.json()["detail"] == "invalid cursor"
