"""Reading in a browser: search that shows the passage that answers with its words marked,
a wiki page that says who can see each section, and the context preview that says why each
item was chosen, in English and Chinese at laptop and phone width."""

import pytest

from connectors.services.ingest import event_ingest
from tests.web.conftest import private_event, public_event

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = [("en", 1280), ("en", 390), ("zh-hans", 1280), ("zh-hans", 390)]
WORDS = {
    "en": {"restricted": "Restricted", "everyone": "everyone at Acme", "why": "the task names it"},
    "zh-hans": {"restricted": "受限", "everyone": "Acme 全体成员", "why": "任务中提到了它"},
}


@pytest.fixture
def vercel(tenant, alice, bob, charlie):
    event_ingest(tenant=tenant, payload=private_event(text="Vercel renewal: **discount ceiling** is 18%."))
    event_ingest(tenant=tenant, payload=public_event())


def _no_sideways_scroll(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_search_shows_the_passage_with_the_words_marked(page_for, vercel, bob, lang, width):
    page = page_for(bob, lang=lang, width=width)
    page.goto("/")
    page.fill("#q", "discount ceiling")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search?q=discount*")
    marks = page.locator("#results .result mark")
    marks.first.wait_for()
    assert {marks.nth(i).inner_text().lower() for i in range(marks.count())} >= {"discount", "ceiling"}
    results = page.locator("#results").inner_text()
    assert "Vercel" in results and "0.0" not in results
    _no_sideways_scroll(page)


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_a_wiki_page_says_who_can_see_each_section(page_for, vercel, bob, lang, width):
    words = WORDS[lang]
    page = page_for(bob, lang=lang, width=width)
    page.goto("/wiki/vercel/")
    private = page.locator("article.section", has_text="discount ceiling")
    public = page.locator("article.section", has_text="kickoff call")
    assert private.locator(".badge.restricted").inner_text() == words["restricted"]
    assert private.locator("strong", has_text="discount ceiling").count() == 1  # Markdown rendered
    assert public.locator(".badge.restricted").count() == 0
    assert words["everyone"] in public.locator(".badge.visible-to").inner_text()
    # The page's own styles apply: the restricted mark stands out from an ordinary badge.
    look = "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).borderTopStyle]"
    restricted = private.locator(".badge.restricted").evaluate(look)
    assert restricted[0] != public.locator(".badge.visible-to").evaluate(look)[0] and restricted[1] == "solid"
    assert page.locator(".page-updated").is_visible()
    summary = page.locator(".card.summary").bounding_box()
    assert summary["y"] < private.bounding_box()["y"]
    _no_sideways_scroll(page)


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_the_context_preview_says_why_each_item_was_chosen(page_for, vercel, bob, lang, width):
    page = page_for(bob, lang=lang, width=width)
    page.goto("/context/")
    assert "dept:" not in page.locator("main").inner_text()
    page.fill("textarea[name=task]", "Vercel renewal")
    page.locator("form button[type=submit]").last.click()
    item = page.locator("article.context-item", has_text="Vercel").first
    item.wait_for()
    assert WORDS[lang]["why"] in item.locator(".badge.reason").inner_text()
    assert item.locator("a[href='/wiki/vercel/']").count() == 1
    _no_sideways_scroll(page)
