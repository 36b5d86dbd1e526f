"""Person pages show each thread once; sections name their source items (`ref`) and links;
pages and sections say when they were said (content time), not only when compiled."""

import pytest

from tests.wiki.conftest import at, email, slack
from wiki.models import PageSection
from wiki.services.people import directory_sync

pytestmark = pytest.mark.django_db


def _meeting():
    return {
        "source": "calendar",
        "external_id": "uid-7",
        "version": 1,
        "kind": "calendar_event",
        "occurred_at": at(0),
        "container": {
            "key": "calendar:event:uid-7",
            "name": "Vercel × Apollo sync",
            "members": ["alice@acme.com"],
        },
        "thread_key": "calendar:event:uid-7",
        "author": "alice@acme.com",
        "title": "Vercel × Apollo sync",
        "text": "Planning",
        "tags": {"customer": "Vercel", "project": "Apollo"},
        "url": "https://calendar.example/event/uid-7",
    }


def test_a_thread_on_two_pages_shows_once_on_its_authors_page(api, tenant, alice, push):
    directory_sync(tenant=tenant)
    push(_meeting())
    assert PageSection.objects.filter(thread_key="calendar:event:uid-7").count() == 2  # Vercel and Apollo
    page = api.get("/wiki/pages/alice", user="alice").json()
    meetings = [s for s in page["sections"] if "Planning" in s["content"]]
    assert len(meetings) == 1
    listed = next(
        p for p in api.get("/wiki/pages", user="alice", kind="person").json() if p["slug"] == "alice"
    )
    assert listed["sections"] == len(page["sections"])  # the list counts what the page shows


def test_sources_carry_the_items_id_and_link(api, push, alice, bob):
    push(email("List price is 40k"), _meeting())
    page = api.get("/wiki/pages/vercel", user="alice").json()
    sources = {s["source"]: s for section in page["sections"] for s in section["sources"]}
    assert sources["email"]["ref"] == "<m1@acme.com>"  # the Message-ID
    assert sources["calendar"]["url"] == "https://calendar.example/event/uid-7"
    assert sources["calendar"]["ref"] == "uid-7"


def test_content_time_is_when_it_was_said(api, push, alice):
    push(slack("Vercel renewal call", tags={"customer": "Vercel"}, minutes=-60 * 24 * 30))
    page = api.get("/wiki/pages/vercel", user="alice").json()
    assert page["content_at"].startswith("2026-10-31")
    assert page["sections"][0]["occurred_at"].startswith("2026-10-31")
    assert page["updated_at"] > page["content_at"]  # compiled today
