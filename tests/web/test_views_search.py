"""The search views (web.views.search.home, search): a query in the URL renders its results, htmx gets
a fragment."""

import pytest

from connectors.services.ingest import event_ingest
from memories.services.memories import memory_create
from tests.web.conftest import ZH, login, private_event

pytestmark = pytest.mark.django_db


def test_home_with_a_query_renders_the_results(client, wiki, bob):
    body = login(client, bob).get("/", {"q": "Vercel discount ceiling"}).content.decode()
    assert "18%" in body


def test_search_opened_directly_is_a_full_page(client, wiki, bob):
    response = login(client, bob).get("/search", {"q": "Vercel discount ceiling"})
    body = response.content.decode()
    assert "<html" in body and "18%" in body and 'value="Vercel discount ceiling"' in body
    assert "HX-Request" in response["Vary"]


def test_search_from_htmx_is_a_fragment_and_pushes_the_url(client, wiki, bob):
    login(client, bob)
    fragment = client.get(
        "/search", {"q": "Vercel discount ceiling"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and "18%" in fragment
    restore = client.get(
        "/search", {"q": "Vercel"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in restore.content.decode()
    assert 'hx-push-url="true"' in client.get("/").content.decode()


def _body(client, user, q, **headers):
    return login(client, user).get("/search", {"q": q}, **headers).content.decode()


def test_the_matching_passage_is_shown_with_the_query_words_marked(client, wiki, bob):
    body = _body(client, bob, "Vercel discount ceiling")
    assert "<mark>discount</mark> <mark>ceiling</mark> is 18%" in body


def test_results_show_no_scores(client, wiki, bob):
    from wiki.search import page_search

    hits = page_search(user=bob, query="Vercel discount ceiling", top_k=5)
    assert hits
    body = _body(client, bob, "Vercel discount ceiling")
    for hit in hits:
        assert f"{hit['score']:.4f}" not in body and f"{hit['score']:.2f}" not in body


def test_a_passage_is_escaped_before_it_is_marked(client, tenant, bob, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(
            tenant=tenant, payload=private_event(text="Vercel <b>escrow</b> terms <script>x()</script>")
        )
    body = _body(client, bob, "escrow terms")
    assert "&lt;b&gt;<mark>escrow</mark>&lt;/b&gt; <mark>terms</mark> &lt;script&gt;" in body
    assert "<script>x()" not in body


def test_a_passage_on_several_pages_is_shown_once_with_all_its_pages(
    client, tenant, bob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(
            tenant=tenant,
            payload=private_event(
                text="Joint security review for the Vercel and Stripe integration on Tuesday.",
                tags={"customer": ["Vercel", "Stripe"]},
            ),
        )
    body = _body(client, bob, "joint security review")
    assert body.count("<mark>security</mark> <mark>review</mark>") == 1
    also = body[body.index("Also on") :]
    assert "Stripe" in also[:400] or "Vercel" in also[:400]


def test_a_question_in_chinese_shows_the_passage_that_answers_it(
    client, tenant, bob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(tenant=tenant, payload=private_event(text="Vercel 的技术对接会在周五举行。"))
        event_ingest(
            tenant=tenant,
            payload=private_event(
                external_id="CFIN/1700000002.000100",
                thread_key="slack:thread:CFIN/1700000002.000100",
                occurred_at="2026-11-20T10:00:00Z",
                text="Vercel 的续约日期定在 2027 年 1 月 31 日。",
            ),
        )
    body = _body(client, bob, "Vercel 续约日期是什么时候", **ZH)
    assert "<mark>续约</mark><mark>日期</mark>定在 2027 年 1 月 31 日" in body
    assert "技术对接" not in body
    assert "Wiki 页面" in body


def test_memories_are_listed_apart_with_their_passage_marked(client, alice):
    memory_create(owner=alice, content="Prefers invoices sent on the first Monday.", memory_type="semantic")
    body = _body(client, alice, "invoices Monday")
    memories = body[body.index('id="results-memories"') :]
    assert "Prefers <mark>invoices</mark> sent on the first <mark>Monday</mark>." in memories
