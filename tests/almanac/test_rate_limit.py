"""Rate limits of the agent API (docs/api.md, Limits: 429): per agent key, and per logged-in user."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from almanac.errors import ApplicationError
from almanac.models import AgentKey
from almanac.services.keys import agentkey_create
from almanac.throttling import rate_parse

pytestmark = pytest.mark.django_db


def _call(client, key):
    return client.get("/api/v1/memories", {"user": "alice"}, headers={"Authorization": f"Bearer {key}"})


def test_a_key_over_its_limit_gets_a_json_429_with_retry_after(client, settings, tenant, alice):
    settings.API_RATE_LIMIT = "3/h"
    key = agentkey_create(tenant=tenant, name="busy")[1]
    assert [_call(client, key).status_code for _ in range(3)] == [200, 200, 200]
    refused = _call(client, key)
    assert refused.status_code == 429 and refused["Content-Type"].startswith("application/json")
    assert "detail" in refused.json() and 0 < int(refused["Retry-After"]) <= 3600
    other = agentkey_create(tenant=tenant, name="calm")[1]
    assert _call(client, other).status_code == 200  # each key counts for itself


def test_a_keys_own_limit_wins(client, settings, tenant, alice):
    settings.API_RATE_LIMIT = "2/h"
    unlimited = agentkey_create(tenant=tenant, name="runtime", rate_limit="0")[1]
    assert {_call(client, unlimited).status_code for _ in range(5)} == {200}
    tight = agentkey_create(tenant=tenant, name="tight", rate_limit="1/h")[1]
    assert [_call(client, tight).status_code for _ in range(2)] == [200, 429]


def test_a_logged_in_user_is_limited_too_and_the_health_check_never(client, settings, alice):
    settings.API_RATE_LIMIT = "2/h"
    client.force_login(alice)
    assert [client.get("/api/v1/memories").status_code for _ in range(3)] == [200, 200, 429]
    client.logout()
    assert {client.get("/api/v1/health").status_code for _ in range(4)} == {200}


def test_rates_are_parsed_strictly():
    assert rate_parse("600/m") == (600, 60)
    assert rate_parse("100/5m") == (100, 300)
    assert rate_parse("50/s") == (50, 1) and rate_parse("50/") == (50, 1)
    assert rate_parse("0") is None and rate_parse("") is None
    for bad in ("fast", "50", "10/x", "10/0m", "-1/m"):
        with pytest.raises(ValueError):
            rate_parse(bad)


def test_a_bad_rate_is_refused_where_keys_are_made(tenant, client):
    with pytest.raises(ApplicationError):
        agentkey_create(tenant=tenant, name="typo", rate_limit="600 per minute")
    with pytest.raises(CommandError):
        call_command("agentkey_create", "acme", "typo", "--rate-limit", "lots")
    assert not AgentKey.objects.filter(name="typo").exists()
    call_command("agentkey_create", "acme", "fine", "--rate-limit", "600/m")
    assert AgentKey.objects.get(name="fine").rate_limit == "600/m"


def test_the_admin_validates_a_keys_rate(client, tenant):
    from almanac.services.users import user_create

    root = user_create(tenant=tenant, username="root", is_admin=True)
    key = agentkey_create(tenant=tenant, name="edit-me")[0]
    client.force_login(root)
    form = {"tenant": tenant.pk, "name": "edit-me", "can_act_for_users": "on", "rate_limit": "soon"}
    response = client.post(f"/admin/almanac/agentkey/{key.pk}/change/", form)
    assert response.status_code == 200 and b"requests/period" in response.content
    assert (
        client.post(f"/admin/almanac/agentkey/{key.pk}/change/", {**form, "rate_limit": "30/s"}).status_code
        == 302
    )
    assert AgentKey.objects.get(pk=key.pk).rate_limit == "30/s"


def test_an_unreadable_stored_rate_falls_back_to_the_default(client, settings, tenant, alice):
    settings.API_RATE_LIMIT = "1/h"
    key, raw = agentkey_create(tenant=tenant, name="raw-update")
    AgentKey.objects.filter(pk=key.pk).update(rate_limit="600 per minute")  # past the validators
    assert [_call(client, raw).status_code for _ in range(2)] == [200, 429]


def test_a_cache_outage_lets_requests_through(client, settings, tenant, alice, monkeypatch):
    from almanac import throttling

    def down(*args, **kwargs):
        raise ConnectionError("redis is down")

    settings.API_RATE_LIMIT = "1/h"
    monkeypatch.setattr(throttling.cache, "add", down)
    key = agentkey_create(tenant=tenant, name="no-cache")[1]
    assert {_call(client, key).status_code for _ in range(3)} == {200}
