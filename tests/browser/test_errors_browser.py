"""Errors and sessions in a browser: a wrong address, a refused form and an ended session each
get a page in the reader's language that says what happened and leads on."""

import pytest
from django.contrib.sessions.models import Session

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = [("en", 1280), ("zh-hans", 390), ("zh-hans", 1280), ("en", 390)]
SAID = {
    "not_found": {"en": "Not found", "zh-hans": "未找到"},
    "refused": {"en": "The form was not accepted", "zh-hans": "表单未被接受"},
    "expired": {"en": "Your session has expired", "zh-hans": "你的登录已过期"},
    "wiki": {"en": "Wiki", "zh-hans": "知识库"},
}


def _fits(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_a_wrong_address_is_a_page_in_the_reader_s_language_not_a_list_of_urls(page_for, alice, lang, width):
    page = page_for(alice, lang=lang, width=width)
    response = page.goto("/wiki-typo/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == SAID["not_found"][lang]
    body = page.locator("body").inner_text()
    assert "URLconf" not in body and "admin/" not in body and "DEBUG" not in body
    page.get_by_role("link", name=SAID["wiki"][lang]).click()  # the navigation leads on
    page.wait_for_url("**/wiki/")
    _fits(page)


@pytest.mark.parametrize(("lang", "width"), SIZES[:2])
def test_a_form_sent_from_a_stale_page_is_refused_in_the_reader_s_language(
    page_for, server, alice, lang, width
):
    page = page_for(alice, lang=lang, width=width)
    page.goto("/settings/")
    # Another tab logged out and in again meanwhile: the token this page holds is stale.
    page.context.clear_cookies(name="csrftoken")
    page.context.add_cookies([{"name": "csrftoken", "value": "x" * 32, "url": f"{server}/"}])
    page.locator('main button[type="submit"]').click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == SAID["refused"][lang]
    assert "CSRF verification failed" not in page.locator("body").inner_text()
    _fits(page)
    page.go_back()
    page.reload()
    page.locator('main button[type="submit"]').click()
    page.wait_for_url("**/settings/?saved=1")  # reloaded, the form goes through


@pytest.mark.parametrize(("lang", "width"), SIZES[:2])
def test_an_expired_session_says_so_and_signing_in_returns_to_the_page(page_for, alice, lang, width):
    alice.set_password("alice-pw-1357")
    alice.save()
    page = page_for(None, lang=lang, width=width)
    page.goto("/accounts/login/?next=/wiki/")
    assert SAID["expired"][lang] not in page.locator("main").inner_text()  # never signed in here
    page.locator('input[name="username"]').fill("alice")
    page.locator('input[name="password"]').fill("alice-pw-1357")
    page.locator('main button[type="submit"]').click()
    page.wait_for_url("**/wiki/")
    Session.objects.all().delete()  # the session ends on the server (expiry, an administrator)
    page.get_by_role("link", name=SAID["wiki"][lang]).click()
    page.wait_for_url("**/accounts/login/?next=/wiki/")
    assert SAID["expired"][lang] in page.locator('main [role="status"]').inner_text()
    _fits(page)
    page.locator('input[name="username"]').fill("alice")
    page.locator('input[name="password"]').fill("alice-pw-1357")
    page.locator('main button[type="submit"]').click()
    page.wait_for_url("**/wiki/")
    assert page.locator('main [role="status"]').count() == 0
