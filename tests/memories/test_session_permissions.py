"""Session endpoints: the act-for-user permission and inactive users, with or without `user`."""

import pytest

from almanac.services.keys import agentkey_create
from memories.models import ConversationSession, Turn
from memories.services.sessions import session_create, turn_add

pytestmark = pytest.mark.django_db

FORBIDDEN = {"detail": "this agent key may not act for users"}


@pytest.fixture
def connector_only(api, tenant):
    """The `api` client, sending a key that may push events but not act for users."""
    api.headers = {
        "Authorization": "Bearer "
        + agentkey_create(tenant=tenant, name="push-only", can_push_events=True, can_act_for_users=False)[1]
    }
    return api


@pytest.fixture
def session(alice):
    session = session_create(user=alice, title="renewal")
    turn_add(session=session, role="user", content="Vercel 的续约底价是 120 万")
    return session


def test_connector_key_is_refused_by_memories_like_this(connector_only, alice):
    # The reference: what every act-for-user endpoint answers such a key.
    response = connector_only.get("/memories", user="alice")
    assert (response.status_code, response.json()) == (403, FORBIDDEN)


@pytest.mark.parametrize("user", [{}, {"user": "alice"}])
def test_connector_key_may_not_read_window(connector_only, session, user):
    response = connector_only.get(f"/sessions/{session.pk}/window", **user)
    assert (response.status_code, response.json()) == (403, FORBIDDEN)


@pytest.mark.parametrize("user", [{}, {"user": "alice"}])
def test_connector_key_may_not_add_turn(connector_only, session, user):
    response = connector_only.post(f"/sessions/{session.pk}/turns", {"role": "user", "content": "x", **user})
    assert (response.status_code, response.json()) == (403, FORBIDDEN)
    assert Turn.objects.filter(session=session).count() == 1


@pytest.mark.parametrize("user", [{}, {"user": "alice"}])
def test_connector_key_may_not_end_session(connector_only, session, user):
    response = connector_only.post(f"/sessions/{session.pk}/end", user)
    assert (response.status_code, response.json()) == (403, FORBIDDEN)
    session.refresh_from_db()
    assert session.status == ConversationSession.Status.OPEN


def test_connector_key_may_not_create_session(connector_only, alice):
    response = connector_only.post("/sessions", {"user": "alice"})
    assert (response.status_code, response.json()) == (403, FORBIDDEN)


def test_connector_key_cannot_probe_which_sessions_exist(connector_only, session):
    # Refused before the lookup: an existing and a missing id answer alike.
    assert connector_only.get(f"/sessions/{session.pk}/window").status_code == 403
    assert connector_only.get("/sessions/999999/window").status_code == 403


@pytest.fixture
def deactivated(alice, session):
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    return session


@pytest.mark.parametrize("user", [{}, {"user": "alice"}])
def test_inactive_users_window_is_404(api, deactivated, user):
    assert api.get(f"/sessions/{deactivated.pk}/window", **user).status_code == 404


@pytest.mark.parametrize("user", [{}, {"user": "alice"}])
def test_inactive_users_session_takes_no_turns(api, deactivated, user):
    response = api.post(f"/sessions/{deactivated.pk}/turns", {"role": "user", "content": "x", **user})
    assert response.status_code == 404
    assert Turn.objects.filter(session=deactivated).count() == 1


@pytest.mark.parametrize("user", [{}, {"user": "alice"}])
def test_inactive_users_session_cannot_be_ended(api, deactivated, user):
    assert api.post(f"/sessions/{deactivated.pk}/end", user).status_code == 404
    deactivated.refresh_from_db()
    assert deactivated.status == ConversationSession.Status.OPEN


def test_acting_key_may_still_omit_user(api, session):
    # docs/api.md, Sessions: an agent key that may act for users need not repeat `user`.
    assert (
        api.post(f"/sessions/{session.pk}/turns", {"role": "assistant", "content": "好的"}).status_code == 201
    )
    assert [t["role"] for t in api.get(f"/sessions/{session.pk}/window").json()["turns"]] == [
        "user",
        "assistant",
    ]
    assert api.post(f"/sessions/{session.pk}/end").status_code == 202


def test_acting_key_without_user_never_reaches_another_tenant(api, mallory):
    theirs = session_create(user=mallory)
    assert api.get(f"/sessions/{theirs.pk}/window").status_code == 404
    assert api.post(f"/sessions/{theirs.pk}/turns", {"role": "user", "content": "x"}).status_code == 404
    assert api.post(f"/sessions/{theirs.pk}/end").status_code == 404
