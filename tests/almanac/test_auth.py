import pytest

from almanac.models import AgentKey
from almanac.services.keys import agentkey_create, agentkey_revoke

pytestmark = pytest.mark.django_db


def bearer(key):
    return {"Authorization": f"Bearer {key}"}


def test_health_reports_database_and_queue(client):
    r = client.get("/api/v1/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert isinstance(body["queue"]["pending"], int)


def test_missing_key_is_401_json(client, alice):
    r = client.get("/api/v1/me", {"user": "alice"})
    assert r.status_code == 401
    assert "detail" in r.json()


def test_unknown_key_is_401(client, alice):
    r = client.get("/api/v1/me", {"user": "alice"}, headers=bearer("alm_not-a-key"))
    assert r.status_code == 401


def test_revoked_key_is_401(client, tenant, alice):
    key, raw = agentkey_create(tenant=tenant, name="soon-revoked")
    assert client.get("/api/v1/me", {"user": "alice"}, headers=bearer(raw)).status_code == 200
    agentkey_revoke(key=key)
    assert client.get("/api/v1/me", {"user": "alice"}, headers=bearer(raw)).status_code == 401


def test_bad_key_wins_over_a_session(client, alice):
    alice.set_password("pw-123456")
    alice.save()
    client.login(username="alice", password="pw-123456")
    assert client.get("/api/v1/me", headers=bearer("alm_wrong")).status_code == 401


def test_key_acts_for_user_of_its_tenant(api, alice):
    r = api.get("/me", user="alice")
    assert r.status_code == 200
    assert r.json()["username"] == "alice"
    assert "user:alice" in r.json()["groups"]


def test_key_finds_user_by_email(api, alice):
    assert api.get("/me", user="alice@acme.com").json()["username"] == "alice"


def test_email_lookup_ignores_case_and_username_does_not(api, alice):
    assert api.get("/me", user="ALICE@Acme.com").json()["username"] == "alice"
    assert api.get("/me", user="ALICE").status_code == 404


def test_inactive_user_is_404(api, alice):
    alice.is_active = False
    alice.save()
    assert api.get("/me", user="alice").status_code == 404
    assert api.get("/me", user="alice@acme.com").status_code == 404


def test_user_of_another_tenant_is_404(api, mallory):
    r = api.get("/me", user="mallory")
    assert r.status_code == 404
    assert "detail" in r.json()


def test_unknown_user_is_404(api, alice):
    assert api.get("/me", user="nobody").status_code == 404


def test_key_without_user_is_422(api, alice):
    assert api.get("/me").status_code == 422


def test_session_user_acting_as_another_is_403(client, alice, bob):
    alice.set_password("pw-123456")
    alice.save()
    client.login(username="alice", password="pw-123456")
    assert client.get("/api/v1/me").json()["username"] == "alice"
    assert client.get("/api/v1/me", {"user": "alice"}).status_code == 200
    assert client.get("/api/v1/me", {"user": "bob"}).status_code == 403
    # Naming oneself by e-mail is case-insensitive, as it is for an agent key.
    assert client.get("/api/v1/me", {"user": "ALICE@acme.com"}).json()["username"] == "alice"


def test_a_username_wins_over_another_user_s_email(api, tenant, alice):
    from almanac.services.users import user_create

    user_create(tenant=tenant, username="alice@acme.com", email="zed@acme.com")
    assert api.get("/me", user="alice@acme.com").json()["username"] == "alice@acme.com"
    assert api.get("/me", user="ALICE@ACME.COM").json()["username"] == "alice"  # by e-mail


def test_key_is_stored_hashed_and_use_is_recorded(api, alice):
    key = AgentKey.objects.get(name="test-agent")
    assert key.hashed_secret != api.headers["Authorization"].split()[1]
    api.get("/me", user="alice")
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_unknown_path_is_json_404(api):
    r = api.get("/no-such-thing")
    assert r.status_code == 404


def test_the_api_root_is_a_json_404(client):
    for path in ("/api/v1/", "/api/v1", "/api/"):
        response = client.get(path)
        assert response.status_code == 404 and response["Content-Type"] == "application/json", path
        assert "no such endpoint" in response.json()["detail"]
