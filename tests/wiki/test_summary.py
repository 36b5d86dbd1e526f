"""Page summaries: made from the sections, shown only to readers who see all of them."""

from tests.wiki.conftest import slack
from wiki import services
from wiki.models import Page


def test_summary_is_shown_only_to_readers_who_see_every_summarized_section(api, vercel_world):
    page = Page.objects.get(slug="vercel")
    services.page_summarize(page_id=page.pk)
    page.refresh_from_db()
    assert page.summary and len(page.summary_section_ids) == 2
    assert api.get("/wiki/pages/vercel", user="bob").json()["summary"] == page.summary
    assert api.get("/wiki/pages/vercel", user="alice").json()["summary"] == ""


def test_summary_is_regenerated_only_when_sections_change(vercel_world, push):
    page = Page.objects.get(slug="vercel")
    assert services.page_summarize(page_id=page.pk) in (True, False)
    assert services.page_summarize(page_id=page.pk) is False
    push(slack("Vercel signed the renewal", tags={"customer": "Vercel"}, minutes=50))
    page.refresh_from_db()
    assert len(page.summary_section_ids) == 3


def test_outdated_summary_is_not_shown(api, vercel_world, push, settings):
    page = Page.objects.get(slug="vercel")
    services.page_summarize(page_id=page.pk)
    settings.WIKI_SUMMARY_ENABLED = False
    push(slack("Vercel churned", tags={"customer": "Vercel"}, minutes=50))
    assert api.get("/wiki/pages/vercel", user="bob").json()["summary"] == ""
