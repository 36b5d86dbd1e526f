"""Getting around in a browser: the skip link, the Tab order, `aria-current`, the user menu
(password change, language, log out) and the language menu, in English and Chinese, at
laptop and phone width."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = [("en", 1280), ("zh-hans", 390)]
NAV = {
    "en": ["Almanac", "Search", "Wiki", "My memories", "Context preview", "Settings", "API", "alice"],
    "zh-hans": ["Almanac", "搜索", "知识库", "我的记忆", "上下文预览", "设置", "API", "alice"],
}


def _focused(page) -> str:
    return page.evaluate("document.activeElement.innerText.trim()")


def _no_sideways_scroll(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_tab_starts_at_a_skip_link_then_follows_the_navigation(page_for, alice, lang, width):
    page = page_for(alice, lang=lang, width=width)
    page.goto("/wiki/")
    page.keyboard.press("Tab")
    skip = page.locator("a.skip")
    assert page.evaluate("document.activeElement.className") == "skip"
    box = skip.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width  # shown once focused
    seen = []
    for _ in NAV[lang]:
        page.keyboard.press("Tab")
        seen.append(_focused(page))
    assert seen == NAV[lang]
    for _ in NAV[lang]:
        page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    _no_sideways_scroll(page)


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_the_current_section_is_marked_for_screen_readers(page_for, alice, lang, width):
    page = page_for(alice, lang=lang, width=width)
    for path, label in (("/wiki/", NAV[lang][2]), ("/memories/", NAV[lang][3]), ("/", NAV[lang][1])):
        page.goto(path)
        current = page.locator('nav a[aria-current="page"]')
        assert current.count() == 1 and current.inner_text() == label, path


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_the_language_changes_only_when_one_is_chosen(page_for, alice, lang, width):
    other, other_name, heading = (
        ("zh-hans", "简体中文", "知识库") if lang == "en" else ("en", "English", "Wiki")
    )
    page = page_for(alice, lang=lang, width=width)
    page.goto("/wiki/")
    page.locator("#user-menu summary").click()
    _no_sideways_scroll(page)
    page.locator(f'#user-menu button[value="{other}"]').focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    page.wait_for_timeout(300)
    assert page.locator("html").get_attribute("lang") == lang  # moving over it chose nothing
    page.locator(f'#user-menu button[value="{other}"]').click()
    page.wait_for_function(f"document.documentElement.lang === '{other}'")
    assert page.url.endswith("/wiki/") and page.locator("h1").inner_text().startswith(heading)
    page.locator("#user-menu summary").click()
    assert page.locator(f'#user-menu button[value="{other}"]').get_attribute("aria-current") == "true"
    assert other_name in page.locator(f'#user-menu button[value="{other}"]').inner_text()


def test_a_visitor_not_logged_in_picks_a_language_from_the_language_menu(page_for, db):
    page = page_for(None, lang="en", width=390)
    page.goto("/accounts/login/")
    page.locator("#language-menu summary").click()
    page.locator('#language-menu button[value="zh-hans"]').click()
    page.wait_for_function("document.documentElement.lang === 'zh-hans'")
    assert page.locator("h1").inner_text() == "登录"
    _no_sideways_scroll(page)


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_the_user_menu_leads_to_password_change_and_the_new_password_works(page_for, alice, lang, width):
    alice.set_password("old-secret-42")
    alice.save()
    labels = {
        "en": ("Change password", "Your password was changed."),
        "zh-hans": ("修改密码", "你的密码已修改。"),
    }
    link, done = labels[lang]
    page = page_for(alice, lang=lang, width=width)
    page.goto("/")
    page.locator("#user-menu summary").click()
    page.get_by_role("link", name=link).click()
    page.wait_for_url("**/accounts/password_change/")
    page.locator('input[name="old_password"]').fill("old-secret-42")
    page.locator('input[name="new_password1"]').fill("lantern-harbor-93")
    page.locator('input[name="new_password2"]').fill("lantern-harbor-93")
    page.locator('main button[type="submit"]').click()
    page.wait_for_url("**/accounts/password_change/done/")
    assert done in page.locator("main").inner_text()
    _no_sideways_scroll(page)
    alice.refresh_from_db()
    assert alice.check_password("lantern-harbor-93")


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_escape_or_a_click_elsewhere_closes_the_user_menu(page_for, alice, lang, width):
    page = page_for(alice, lang=lang, width=width)
    page.goto("/wiki/")
    menu = page.locator("#user-menu")
    menu.locator("summary").click()
    assert menu.get_attribute("open") is not None
    page.keyboard.press("Escape")
    assert menu.get_attribute("open") is None
    assert page.evaluate("document.activeElement.closest('#user-menu') !== null")  # back on its button
    menu.locator("summary").click()
    page.mouse.click(5, page.viewport_size["height"] - 5)  # the page's bottom left, away from the menu
    assert menu.get_attribute("open") is None
