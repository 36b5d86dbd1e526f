"""Logging in and out in a browser, in English and Chinese, at laptop and phone width."""

import pytest

from almanac.services.users import user_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def dana(tenant):
    return user_create(tenant=tenant, username="dana", email="dana@acme.com", password="dana-pw-2468")


@pytest.mark.parametrize(("lang", "width", "heading"), [("en", 1280, "Log in"), ("zh-hans", 390, "登录")])
def test_a_person_logs_in_with_name_and_password_and_lands_on_search(page_for, dana, lang, width, heading):
    page = page_for(None, lang=lang, width=width)
    page.goto("/accounts/login/")
    assert page.locator("h1").inner_text() == heading
    page.locator('input[name="username"]').fill("dana")
    page.locator('input[name="password"]').fill("dana-pw-2468")
    page.locator('main button[type="submit"]').click()
    page.wait_for_url("**/")
    assert "dana" in page.locator("nav").inner_text()
    assert page.locator('input[name="q"]').count() == 1
