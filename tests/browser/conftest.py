"""Browser tests: Playwright driving Debian's Chromium against a live server on the real test
database (pytest-django's `live_server`; each test is transactional, its rows flushed after).

`page_for(user, lang="en", width=1280)` opens a page for `user` (logged in by a session
cookie; `None`: logged out) in English or Chinese ("zh-hans") at desktop (1280) or phone
(390) width; `server` is the live server's base URL. A failing test leaves a screenshot of
each page it opened under its own tmp_path (the path is printed in the report).

Without Chromium (or the playwright package) the tests are skipped with how to install it:
`make test` installs it itself where it runs as root with apt-get.
"""

from __future__ import annotations

import os
import shutil

import pytest
from django.conf import settings
from django.test import Client

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
HEIGHTS = {1280: 900, 390: 844}  # a laptop, a phone
INSTALL_HINT = (
    "apt-get install -y --no-install-recommends chromium fonts-wqy-zenhei "
    "(as root; `make test` does it itself when it can)"
)
_PAGES = pytest.StashKey[list]()
_SHOTS_DIR = pytest.StashKey[object]()


def _chromium() -> str | None:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")


@pytest.fixture(scope="module")
def browser():
    """One Chromium per test module. Playwright's sync API keeps an event loop marked running
    in this thread while it is started, so Django's "async context" guard is lifted for the
    module only (the ORM calls here are synchronous: the guard has nothing to catch), and the
    next module starts with it back in place."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(f"playwright is not installed: pip install -e '.[dev]'; and {INSTALL_HINT}")
    executable = _chromium()
    if not executable:
        pytest.skip(f"Chromium is not installed: {INSTALL_HINT}")
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()
    playwright.stop()
    if before is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def server(live_server) -> str:
    return live_server.url


@pytest.fixture
def page_for(browser, server, request, tmp_path):
    """`page_for(user=None, lang="en", width=1280)`: a new browser context and page; the
    user logged in by a session made on the server's database, the language chosen as a
    reader would (the language cookie), the viewport a laptop's or a phone's."""
    contexts = []
    request.node.stash[_PAGES] = []
    request.node.stash[_SHOTS_DIR] = tmp_path

    def open_page(user=None, lang: str = "en", width: int = 1280):
        context = browser.new_context(
            base_url=server,
            viewport={"width": width, "height": HEIGHTS.get(width, 900)},
            locale="zh-CN" if lang.startswith("zh") else "en-US",
        )
        context.set_default_timeout(10_000)
        cookies = [{"name": settings.LANGUAGE_COOKIE_NAME, "value": lang, "url": server}]
        if user is not None:
            client = Client()
            client.force_login(user)
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            cookies.append({"name": settings.SESSION_COOKIE_NAME, "value": session, "url": server})
        context.add_cookies(cookies)
        contexts.append(context)
        page = context.new_page()
        request.node.stash[_PAGES].append(page)
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, a screenshot of every page the test opened, under its tmp_path (taken
    while the pages are still open: fixtures are torn down after this report)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    pages, folder = item.stash.get(_PAGES, []), item.stash.get(_SHOTS_DIR, None)
    shots = []
    for index, page in enumerate(pages):
        path = folder / f"failure-{index}.png"
        try:
            page.screenshot(path=str(path), full_page=True)
        except Exception as exc:  # a crashed page: the report says so instead
            shots.append(f"page {index} ({page.url}): no screenshot ({exc})")
            continue
        shots.append(f"page {index} ({page.url}): {path}")
    if shots:
        report.sections.append(("screenshots", "\n".join(shots)))
