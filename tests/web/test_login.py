"""The login page (almanac.login): names are per tenant, so two companies' alices each log
in as themselves; the organisation field settles what the password cannot."""

import pytest

from almanac.services.users import user_create
from tests.web.conftest import ZH

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices(tenant, other_tenant):
    acme = user_create(tenant=tenant, username="alice", email="alice@acme.com", password="acme-pw-1234")
    globex = user_create(
        tenant=other_tenant, username="alice", email="alice@globex.com", password="globex-pw-1234"
    )
    return acme, globex


def _login(client, username, password, organisation="", **headers):
    form = {"username": username, "password": password, "organisation": organisation}
    return client.post("/accounts/login/", form, **headers)


def _who(client):
    return client.get("/api/v1/me").json().get("tenant")


def test_the_login_page_asks_for_the_organisation(client, db):
    body = client.get("/accounts/login/?organisation=globex").content.decode()
    assert 'name="organisation"' in body and 'value="globex"' in body
    assert "组织" in client.get("/accounts/login/", **ZH).content.decode()


def test_each_alice_logs_in_as_herself_by_name_and_password(client, alices):
    assert _login(client, "alice", "acme-pw-1234").status_code == 302
    assert _who(client) == "acme"
    client.logout()
    assert _login(client, "alice", "globex-pw-1234").status_code == 302
    assert _who(client) == "globex"


def test_the_organisation_picks_the_tenant(client, alices):
    assert _login(client, "alice", "globex-pw-1234", organisation="globex").status_code == 302
    assert _who(client) == "globex"
    client.logout()
    # the right password for the other tenant's alice is a wrong one here
    response = _login(client, "alice", "acme-pw-1234", organisation="globex")
    assert response.status_code == 200 and "correct username and password" in response.content.decode()


def test_an_email_or_a_handle_logs_in_too(client, alices):
    assert _login(client, "ALICE@globex.com", "globex-pw-1234").status_code == 302
    assert _who(client) == "globex"
    client.logout()
    assert _login(client, "globex:alice", "globex-pw-1234").status_code == 302
    assert _who(client) == "globex"


def test_the_same_name_and_password_in_two_tenants_needs_the_organisation(client, alices):
    for user in alices:
        user.set_password("shared-pw-1234")
        user.save()
    response = _login(client, "alice", "shared-pw-1234")
    assert response.status_code == 200 and "more than one organisation" in response.content.decode()
    response = _login(client, "alice", "shared-pw-1234", **ZH)
    assert "不止一个组织" in response.content.decode()
    assert _login(client, "alice", "shared-pw-1234", organisation="acme").status_code == 302
    assert _who(client) == "acme"


def test_client_login_and_the_admin_login_find_users_per_tenant(client, alices, tenant):
    assert client.login(username="alice", password="globex-pw-1234")
    assert _who(client) == "globex"
    client.logout()
    user_create(tenant=tenant, username="root", is_admin=True, password="root-pw-1234")
    form = {"username": "root", "password": "root-pw-1234", "next": "/admin/"}
    assert client.post("/admin/login/", form).status_code == 302


EXPIRED = {"en": "Your session has expired", "zh": "你的登录已过期"}


def _end_sessions():
    from django.contrib.sessions.models import Session

    Session.objects.all().delete()  # what expiry (or an administrator) does on the server


def test_an_ended_session_says_so_on_the_login_page_once(client, alices):
    assert _login(client, "alice", "acme-pw-1234").status_code == 302
    assert client.get("/wiki/").status_code == 200
    _end_sessions()
    response = client.get("/wiki/")
    assert response.status_code == 302 and response.url.startswith("/accounts/login/?next=/wiki/")
    assert EXPIRED["zh"] in client.get(response.url, **ZH).content.decode()
    assert EXPIRED["en"] not in client.get(response.url).content.decode()  # said once
    assert _login(client, "alice", "acme-pw-1234").status_code == 302
    assert EXPIRED["en"] not in client.get("/").content.decode()


def test_an_ended_session_says_so_on_an_htmx_request_s_login_page(client, alices):
    _login(client, "alice", "acme-pw-1234")
    _end_sessions()
    response = client.get("/search?q=x", HTTP_HX_REQUEST="true")
    assert response.headers["HX-Redirect"].startswith("/accounts/login/")
    assert EXPIRED["en"] in client.get(response.headers["HX-Redirect"]).content.decode()


def test_never_having_logged_in_or_logging_out_is_not_an_expired_session(client, alices):
    assert EXPIRED["en"] not in client.get("/accounts/login/?next=/wiki/").content.decode()
    _login(client, "alice", "acme-pw-1234")
    client.post("/accounts/logout/")
    assert client.get("/wiki/").status_code == 302
    assert EXPIRED["en"] not in client.get("/accounts/login/?next=/wiki/").content.decode()
