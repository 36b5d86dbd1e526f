"""Error pages (web.views.errors): 403, 404, 500 and a refused form in the reader's language,
never Django's technical pages; the agent API's paths answer JSON."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from tests.web.conftest import ZH, login

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _boom(exc):
    def raise_it(**kwargs):
        raise exc

    return raise_it


@pytest.mark.parametrize("debug", ["", "1", "0"])
def test_no_mode_serves_django_s_technical_pages(debug):
    """`make run` serves with DEBUG unset (development mode): Django's DEBUG, which lists
    every URL on a 404 and the settings on a 500, is off in every mode."""
    env = {"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "k"}
    if debug:
        env["DEBUG"] = debug
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG, settings.DEVELOPMENT)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.split() == ["False", str(debug != "0")], out.stderr


@pytest.mark.parametrize(
    ("headers", "said"),
    [({}, "There is no such page"), (ZH, "没有这个页面")],
)
def test_an_unknown_address_is_a_friendly_404_in_the_reader_s_language(client, alice, headers, said):
    response = login(client, alice).get("/no/such/page", **headers)
    body = response.content.decode()
    assert response.status_code == 404 and said in body
    assert "URLconf" not in body and "api/v1/" not in body.replace('href="/api/v1/docs"', "")
    assert 'href="/wiki/"' in body  # the web UI's navigation: the reader can go on


def test_a_page_a_view_does_not_find_is_the_same_404(client, alice):
    response = login(client, alice).get("/wiki/no-such-page/", **ZH)
    assert response.status_code == 404 and "没有这个页面" in response.content.decode()


def test_a_refusal_is_a_friendly_403(client, alice, monkeypatch):
    monkeypatch.setattr("web.views.search.search_results", _boom(PermissionDenied("no")))
    response = login(client, alice).get("/", **ZH)
    assert response.status_code == 403 and "你无权打开这个页面" in response.content.decode()


def test_a_failure_is_a_friendly_500_without_a_traceback(alice, monkeypatch):
    monkeypatch.setattr("web.views.search.search_results", _boom(RuntimeError("secret detail")))
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    for headers, said in (({}, "Something went wrong"), (ZH, "出错了")):
        response = client.get("/", **headers)
        body = response.content.decode()
        assert response.status_code == 500 and said in body
        assert "secret detail" not in body and "Traceback" not in body


def test_a_failure_on_the_agent_api_is_a_json_500(alice, monkeypatch):
    monkeypatch.setattr("almanac.api.user_group_keys", _boom(RuntimeError("secret detail")))
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    response = client.get("/api/v1/me")
    assert response.status_code == 500 and response["Content-Type"].startswith("application/json")
    assert "secret detail" not in response.json()["detail"]


@pytest.mark.parametrize(
    ("headers", "said"),
    [({}, "The form was not accepted"), (ZH, "表单未被接受")],
)
def test_a_form_without_its_csrf_token_gets_a_page_in_the_reader_s_language(alice, headers, said):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.get("/")  # the CSRF cookie, as a browser has it
    response = client.post("/settings/", {"skills": ["weekly_report"]}, **headers)
    body = response.content.decode()
    assert response.status_code == 403 and said in body
    assert "CSRF verification failed" not in body and 'href="/wiki/"' in body


def test_a_form_sent_without_the_cookie_says_to_allow_cookies(db):
    response = Client(enforce_csrf_checks=True).post("/accounts/login/", {"username": "x"}, **ZH)
    assert response.status_code == 403 and "允许本站的 Cookie" in response.content.decode()


@pytest.mark.parametrize(("headers", "said"), [({}, "Not a page to open"), (ZH, "这个地址不能直接打开")])
def test_a_form_s_address_opened_by_a_visit_is_a_page_not_a_blank(client, alice, headers, said):
    response = login(client, alice).get("/memories/1/undo", **headers)
    body = response.content.decode()
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert said in body and 'href="/wiki/"' in body


@pytest.mark.parametrize(("headers", "said"), [({}, "could not be read"), (ZH, "无法处理这个请求")])
def test_input_the_database_refuses_is_a_page_without_its_error(client, alice, headers, said):
    response = login(client, alice).get("/wiki/%00/", **headers)
    body = response.content.decode()
    assert response.status_code == 400 and said in body
    assert "PostgreSQL" not in body and "NUL" not in body and 'href="/wiki/"' in body


def test_the_agent_api_keeps_its_json_refusals(client, alice):
    response = login(client, alice).get("/api/v1/context")
    assert response.status_code == 405 and response["Content-Type"].startswith("application/json")
