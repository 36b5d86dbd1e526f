"""Drift: edits, deletions, recalls and closed issues follow the sources."""

import pytest

from tests.wiki.conftest import at, email, slack
from wiki import search, selectors
from wiki.models import Page, PageSection


def _issue(kind, *, version, minutes, number=7):
    return {
        "source": "github",
        "external_id": f"acme/apollo#{number}",
        "version": version,
        "kind": kind,
        "occurred_at": at(minutes),
        "container": {"key": "github:repo:acme/apollo", "name": "acme/apollo", "public": True},
        "thread_key": f"github:issue:acme/apollo#{number}",
        "author": "carol",
        "title": "Ship the billing export",
        "text": "We need CSV export of invoices",
        "tags": {"project": "Apollo"},
        "url": f"https://github.com/acme/apollo/issues/{number}",
    }


def test_edit_recompiles_the_thread(push, alice):
    first = slack("Vercel wants 100 seats", tags={"customer": "Vercel"}, ts="1700000000.000100")
    push(first, slack("Sounds good", thread="1700000000.000100", minutes=1, tags={"customer": "Vercel"}))
    edited = dict(first, version=2, kind="message_changed", text="Vercel wants 250 seats", occurred_at=at(10))
    push(edited)
    [section] = PageSection.objects.filter(page__slug="vercel")
    assert "250 seats" in section.content and "100 seats" not in section.content
    assert "Sounds good" in section.content
    assert [h.section.pk for h in search.section_search(user=alice, query="250 seats")][:1] == [section.pk]


def test_delete_removes_only_that_contribution(push):
    root = slack("Vercel wants 100 seats", tags={"customer": "Vercel"}, ts="1700000000.000100")
    reply = slack("Their CFO is Dana", thread="1700000000.000100", ts="1700000001.000100", minutes=1)
    push(root, reply)
    push(dict(reply, version=2, kind="message_deleted", text="", occurred_at=at(5)))
    [section] = PageSection.objects.filter(page__slug="vercel")
    assert "Dana" not in section.content and "100 seats" in section.content
    push(dict(root, version=2, kind="message_deleted", text="", occurred_at=at(6)))
    assert not PageSection.objects.filter(page__slug="vercel").exists()


def test_recall_makes_sections_stale_until_confirmed(api, push, alice, bob):
    push(email("List price is 40k, we can go to 32k"))
    assert PageSection.objects.get(page__slug="vercel").stale is False
    push(email("Recall: Vercel pricing", kind="email_recalled", version=2, minutes=30))
    section = PageSection.objects.get(page__slug="vercel")
    assert section.stale and section.stale_reason
    hits = search.section_search(user=alice, query="list price 32k")
    assert [h for h in hits if h.section.page.kind != "person"] == []  # (not the authors' directory sections)
    assert api.get("/wiki/pages/vercel", user="alice").json()["sections"] == []
    assert selectors.stale_section_count(user=alice, page_ids=[section.page_id]) == 1
    response = api.post(
        "/wiki/pages/vercel/confirm",
        {"user": "alice", "section_ids": [section.pk], "reason": "the quote stands"},
    )
    assert response.status_code == 200 and response.json() == {"confirmed": [section.pk]}
    section.refresh_from_db()
    assert not section.stale
    assert section.history.first().history_change_reason == "confirmed by alice"
    hits = search.section_search(user=alice, query="list price 32k")
    assert [h.section.pk for h in hits if h.section.page.kind != "person"] == [section.pk]


def test_confirmed_recall_stays_confirmed_after_a_later_reply(push, alice):
    push(email("List price is 40k"), email("Recall", kind="email_recalled", version=2, minutes=30))
    section = PageSection.objects.get(page__slug="vercel")
    from wiki.services.sections import section_confirm

    section_confirm(user=alice, page=section.page, section_ids=[section.pk], reason="the quote stands")
    push(email("Follow-up: see attached", external_id="<m2@acme.com>", minutes=40))
    section.refresh_from_db()
    assert not section.stale and "Follow-up" in section.content


def test_a_confirmed_recall_holds_on_a_page_a_later_reply_adds(push, alice):
    from wiki.services.sections import section_confirm

    push(email("List price is 40k"), email("Recall", kind="email_recalled", version=2, minutes=30))
    section = PageSection.objects.get(page__slug="vercel")
    section_confirm(user=alice, page=section.page, section_ids=[section.pk], reason="the quote stands")
    reply = email("Rho wants the same terms", external_id="<m3@acme.com>", minutes=40)
    push(dict(reply, tags={"customer": "Rho"}))  # the thread now shows on Rho's page too
    rho = PageSection.objects.get(page__slug="rho")
    assert not rho.stale and "List price is 40k" in rho.content


def test_confirming_a_recall_confirms_the_thread_on_every_page(push, alice):
    from almanac.models import AuditEvent
    from wiki.services.sections import section_confirm

    push(email("List price is 40k"))
    push(dict(email("Rho too", external_id="<m4@acme.com>", minutes=5), tags={"customer": "Rho"}))
    push(email("Recall", kind="email_recalled", version=2, minutes=30))
    vercel, rho = PageSection.objects.get(page__slug="vercel"), PageSection.objects.get(page__slug="rho")
    assert vercel.stale and rho.stale
    section_confirm(user=alice, page=vercel.page, section_ids=[vercel.pk], reason="the quote stands")
    rho.refresh_from_db()
    assert not rho.stale
    assert {e.detail["page"] for e in AuditEvent.objects.filter(action="wiki.section_confirmed")} == {
        "vercel",
        "rho",
    }


def test_confirm_of_an_invisible_section_is_404(api, push, alice, charlie):
    push(email("List price is 40k"), email("Recall", kind="email_recalled", version=2, minutes=30))
    section = PageSection.objects.get(page__slug="vercel")
    response = api.post("/wiki/pages/vercel/confirm", {"user": "charlie", "section_ids": [section.pk]})
    assert response.status_code == 404
    section.refresh_from_db()
    assert section.stale


def test_issue_closed_closes_the_project_page_and_reopen_opens_it(push, carol_user):
    push(_issue("issue", version=1, minutes=0))
    assert Page.objects.get(slug="apollo").status == "open"
    push(_issue("issue_closed", version=2, minutes=60))
    page = Page.objects.get(slug="apollo")
    assert page.status == "closed"
    assert "[closed]" in page.sections.get().content
    push(_issue("issue", version=3, minutes=120))
    assert Page.objects.get(slug="apollo").status == "open"


def test_late_older_version_does_not_overwrite_newer(push):
    first = slack("Vercel wants 100 seats", tags={"customer": "Vercel"}, ts="1700000000.000100")
    v3 = dict(first, version=3, kind="message_changed", text="Vercel wants 300 seats", occurred_at=at(30))
    v2 = dict(first, version=2, kind="message_changed", text="Vercel wants 200 seats", occurred_at=at(20))
    push(first, v3, v2)
    content = PageSection.objects.get(page__slug="vercel").content
    assert "300 seats" in content and "200 seats" not in content


def test_delete_arriving_before_the_message_leaves_nothing(push):
    message = slack("Vercel churn risk", tags={"customer": "Vercel"}, ts="1700000000.000100")
    push(dict(message, version=2, kind="message_deleted", text="", occurred_at=at(5)), message)
    assert not PageSection.objects.filter(page__slug="vercel").exists()


@pytest.mark.django_db(transaction=True)
def test_confirm_works_outside_a_test_transaction(api, push, alice):
    """The service opens its own transaction (the other tests run inside one, which hid a
    select_for_update outside any)."""
    push(email("List price is 40k"), email("Recall", kind="email_recalled", version=2, minutes=30))
    section = PageSection.objects.get(page__slug="vercel")
    response = api.post(
        "/wiki/pages/vercel/confirm",
        {"user": "alice", "section_ids": [section.pk], "reason": "the quote stands"},
    )
    assert response.status_code == 200 and response.json() == {"confirmed": [section.pk]}
