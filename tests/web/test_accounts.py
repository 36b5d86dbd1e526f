"""Accounts in the web UI: logout, password change and reset."""

import pytest

from tests.web.conftest import login

pytestmark = pytest.mark.django_db


def test_logging_out_goes_home(client, alice):
    response = login(client, alice).post("/accounts/logout/")
    assert response.status_code == 302 and response.url == "/"


def test_password_reset_is_not_offered_without_a_mail_server(client, db):
    assert client.get("/accounts/password_reset/").status_code == 404


def test_password_change_uses_the_web_ui_layout(client, alice):
    body = login(client, alice).get("/accounts/password_change/").content.decode()
    assert 'name="new_password1"' in body and "Django administration" not in body
    assert 'href="/wiki/"' in body  # the web UI's navigation


def test_a_weak_new_password_is_refused_in_the_reader_s_language(client, alice):
    alice.set_password("old-secret-42")
    alice.save()
    login(client, alice)
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    for weak, said in (
        ("password", "这个密码太常见了"),
        ("x7-k", "密码太短"),
        ("1234567890", "密码只包含数字"),
    ):
        form = {"old_password": "old-secret-42", "new_password1": weak, "new_password2": weak}
        body = client.post("/accounts/password_change/", form, **zh).content.decode()
        assert said in body and "This password" not in body, weak
    alice.refresh_from_db()
    assert alice.check_password("old-secret-42")


def test_the_user_menu_offers_password_change_language_and_log_out(client, alice):
    body = login(client, alice).get("/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    menu = body.split('id="user-menu"', 1)[1].split("</details>", 1)[0]
    assert 'href="/accounts/password_change/"' in menu and "修改密码" in menu
    assert 'name="language" value="en"' in menu and 'name="language" value="zh-hans"' in menu
    assert 'action="/accounts/logout/"' in menu
    assert ">English<" in menu and "英语" not in menu  # each language named in its own


def test_the_language_changes_only_when_one_is_chosen(client, db):
    body = client.get("/accounts/login/").content.decode()
    assert "onchange" not in body and "<select" not in body
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/accounts/login/"})
    assert response.status_code == 302
    assert "登录" in client.get("/accounts/login/").content.decode()


def test_navigation_marks_the_current_page_and_offers_a_skip_link(client, alice):
    login(client, alice)
    for path, link in (("/", 'href="/"'), ("/wiki/", 'href="/wiki/"'), ("/memories/", 'href="/memories/"')):
        body = client.get(path).content.decode()
        nav = body.split("<nav", 1)[1].split("</nav>", 1)[0]
        assert nav.count('aria-current="page"') == 1, path
        assert f'{link} aria-current="page"' in nav, path
        assert body.index('class="skip" href="#main"') < body.index("<nav") and 'id="main"' in body
    body = client.get("/accounts/password_change/").content.decode()
    assert 'href="/accounts/password_change/" aria-current="page"' in body
