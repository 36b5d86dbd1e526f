"""The wiki API: happy paths, 404 for pages a user may not see, 4xx for bad input."""

import pytest

from tests.wiki.conftest import slack
from wiki.models import Page, PageSection


def test_list_filters_by_kind_and_query(api, vercel_world, push):
    push(slack("Apollo standup notes", tags={"project": "Apollo"}))
    pages = api.get("/wiki/pages", user="alice", kind="project").json()
    assert [p["slug"] for p in pages] == ["apollo"]
    assert [p["slug"] for p in api.get("/wiki/pages", user="alice", q="VERCEL").json()] == ["vercel"]


def test_get_page_shows_sources_and_status(api, vercel_world):
    body = api.get("/wiki/pages/vercel", user="alice").json()
    assert body["kind"] == "customer" and body["status"] == "active"
    [section] = body["sections"]
    assert section["sources"][0]["source"] == "slack"
    assert section["sources"][0]["url"].startswith("https://acme.slack.com/")
    assert section["sources"][0]["occurred_at"].startswith("2026-11-30T10:00")


def test_search_ranks_pages(api, vercel_world, push):
    push(slack("Apollo launch slips a week", tags={"project": "Apollo"}))
    body = api.post("/wiki/search", {"user": "alice", "query": "Apollo launch", "top_k": 5}).json()
    assert body["results"][0]["page"]["slug"] == "apollo"
    hit = body["results"][0]["sections"][0]
    assert hit["breakdown"]["keyword_rank"] == 1 and hit["score"] > 0


def test_search_reads_no_column_lazily(api, vercel_world, push, django_assert_max_num_queries):
    # Hits load only the columns the response shows: a missing one would cost a query per
    # hit, so more hits must not mean more queries.
    body = {"user": "alice", "query": "Apollo launch", "top_k": 5}
    push(slack("Apollo launch slips a week", tags={"project": "Apollo"}))
    with django_assert_max_num_queries(100) as few:
        assert api.post("/wiki/search", body).status_code == 200
    for i in range(6):
        push(slack(f"Apollo launch checklist item {i} done", tags={"project": "Apollo"}))
    with django_assert_max_num_queries(len(few.captured_queries)) as many:
        results = api.post("/wiki/search", body).json()["results"]
    assert sum(len(r["sections"]) for r in results) >= 7 and len(many.captured_queries) > 0


def test_unknown_page_and_other_tenant_user_are_404(api, vercel_world, mallory):
    assert api.get("/wiki/pages/nope", user="alice").status_code == 404
    assert api.get("/wiki/pages/vercel", user="mallory").status_code == 404
    assert api.post("/wiki/search", {"user": "mallory", "query": "Vercel"}).status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"user": "alice"},
        {"user": "alice", "query": ""},
        {"user": "alice", "query": "   "},
        {"user": "alice", "query": "a\x00b"},
        {"user": "alice", "query": "x", "top_k": 0},
        {"user": "alice", "query": "x", "top_k": 10_000},
        {"user": "alice", "query": "x" * 5000},
        {"user": "alice", "query": "x", "extra": 1},
    ],
)
def test_search_rejects_bad_input(api, vercel_world, body):
    response = api.post("/wiki/search", body)
    assert response.status_code == 422, response.content
    assert "detail" in response.json()


def test_search_without_user_is_422_with_an_agent_key(api, vercel_world):
    assert api.post("/wiki/search", {"query": "Vercel"}).status_code == 422


@pytest.mark.parametrize(
    "body", [{"user": "alice"}, {"user": "alice", "section_ids": []}, {"section_ids": "x"}]
)
def test_confirm_rejects_bad_input(api, vercel_world, body):
    assert api.post("/wiki/pages/vercel/confirm", body).status_code == 422


def test_confirm_of_a_section_on_another_page_is_404(api, vercel_world, push):
    push(slack("Apollo launch", tags={"project": "Apollo"}))
    other = PageSection.objects.get(page__slug="apollo")
    response = api.post("/wiki/pages/vercel/confirm", {"user": "alice", "section_ids": [other.pk]})
    assert response.status_code == 404


def test_list_rejects_unknown_kind(api, vercel_world):
    assert api.get("/wiki/pages", user="alice", kind="planet").status_code == 422


def test_unicode_slug(api, push, alice):
    push(slack("续约谈判顺利", tags={"customer": "华为技术有限公司"}))
    page = Page.objects.get(entity__key="华为")
    assert page.slug == "华为"
    response = api.get(f"/wiki/pages/{page.slug}", user="alice")
    assert response.status_code == 200, response.content


def test_list_pins_query_count(api, vercel_world, push, django_assert_max_num_queries):
    push(
        slack("Apollo launch", tags={"project": "Apollo"}),
        slack("Zephyr kickoff", tags={"project": "Zephyr"}),
    )
    # the 9th: the pages' open work, counted for the reader; the 10th: the customer's open items
    with django_assert_max_num_queries(10):
        listed = api.get("/wiki/pages", user="alice").json()
    assert len([p for p in listed if p["kind"] != "person"]) == 3  # and the authors' person pages


def _when(value: str):
    """The time as the API shows it, in whole milliseconds (as its JSON encoder writes them)."""
    from datetime import datetime

    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _ms(moment):
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def test_search_and_page_show_when_the_page_changed_for_the_reader(api, vercel_world):
    # bob's private #finance-internal section is the page's newest change: alice must not
    # learn when it happened (nor see a raw BM25 score, whose statistics count it).
    public = PageSection.objects.get(content__contains="SSO")
    private = PageSection.objects.get(content__contains="margin floor")
    assert private.updated_at > public.updated_at
    for user, newest in (("alice", public), ("bob", private)):
        [result] = api.post("/wiki/search", {"user": user, "query": "Vercel"}).json()["results"]
        assert _when(result["page"]["updated_at"]) == _ms(newest.updated_at)
        assert all("keyword_score" not in hit["breakdown"] for hit in result["sections"])
    # Only a stale section left for alice: the page still answers with its time, not the page's.
    PageSection.objects.filter(pk=public.pk).update(stale=True)
    body = api.get("/wiki/pages/vercel", user="alice").json()
    assert body["sections"] == [] and body["stale_sections"] == 1
    assert _when(body["updated_at"]) == _ms(public.updated_at)


def test_search_does_not_rank_far_vector_neighbours_above_the_page_with_the_word(api, vercel_world, push):
    from tests.wiki.conftest import slack

    push(slack("华为 asked for an on-prem installer", tags={"customer": "华为"}))
    results = api.post("/wiki/search", {"user": "alice", "query": "华为", "top_k": 10}).json()["results"]
    assert results[0]["page"]["title"] == "华为"
    for result in results:  # every page listed has the word, or a hit that is actually similar
        assert all(
            hit["breakdown"]["keyword_rank"] is not None or hit["breakdown"]["vector_similarity"] >= 0.15
            for hit in result["sections"]
        ), result


def test_search_for_nothing_relevant_returns_nothing(api, vercel_world):
    for query in ("ZZQX-nothing-qqq xylophone quasar", "齉龘靐 量子木琴 类星体"):
        assert api.post("/wiki/search", {"user": "alice", "query": query}).json() == {"results": []}


def test_a_chinese_query_finds_an_english_page(api, vercel_world):
    results = api.post("/wiki/search", {"user": "alice", "query": "续约电话很顺利吗"}).json()["results"]
    assert [r["page"]["slug"] for r in results] == ["vercel"]
