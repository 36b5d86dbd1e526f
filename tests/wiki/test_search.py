"""Wiki search (wiki.search): the keyword lane's floor, the one page ranking of search and
context, and hits read through the access filter."""

import pytest

from almanac.search import keyword
from wiki import search
from wiki.constants import CORPUS
from wiki.models import PageSection
from wiki.search import RankedSection, rank_pages

pytestmark = pytest.mark.django_db


def hit(pk, page_id, score, *, coverage=None, similarity=None):
    breakdown = {"keyword_coverage": coverage, "vector_similarity": similarity}
    return RankedSection(id=pk, page_id=page_id, score=score, breakdown=breakdown)


def test_a_page_with_one_strong_hit_outranks_a_page_with_many_weak_ones():
    ranked = [
        hit(1, page_id=10, score=0.033, coverage=1.0),
        *(hit(2 + i, page_id=20, score=0.016, coverage=0.5) for i in range(3)),
    ]
    assert [pid for pid, _ in rank_pages(ranked)] == [10, 20]


def test_hits_below_the_relevance_floor_count_for_nothing():
    ranked = [
        hit(1, page_id=10, score=0.03, coverage=0.1, similarity=0.05),
        hit(2, page_id=20, score=0.01, coverage=1.0),
    ]
    assert rank_pages(ranked) == [(20, 0.01)]


def test_named_pages_come_first_and_pages_already_returned_are_left_out():
    ranked = [hit(1, page_id=10, score=0.03, coverage=1.0), hit(2, page_id=20, score=0.02, coverage=1.0)]
    assert [pid for pid, _ in rank_pages(ranked, [30, 20])] == [30, 20, 10]
    assert [pid for pid, _ in rank_pages(ranked, [30], {10})] == [30, 20]


def test_page_search_ranks_pages_as_the_context_call_does(alice, vercel_world, push):
    from tests.wiki.conftest import slack

    push(slack("Globex onboarding: they ask about SSO and SCIM", tags={"customer": "Globex"}, minutes=9))
    from context.cursor import Seen
    from context.selection import Selection, select_pages

    # The same order; only the context call leaves out another customer's page when the task
    # names one customer (context.selection.Apart): a search still shows it.
    for query, left_out in (("Vercel SSO", ["Globex"]), ("SSO onboarding", []), ("Globex", [])):
        selection = Selection()
        select_pages(user=alice, tenant=alice.profile.tenant, task=query, seen=Seen(), selection=selection)
        found = [r["page"] for r in search.page_search(user=alice, query=query, top_k=10)]
        kept = [page.pk for page in found if page.pk in selection.candidate_page_ids]
        assert kept == selection.candidate_page_ids[: len(kept)] and kept, query
        assert [page.title for page in found if page.pk not in kept] == left_out, query


def test_a_section_sharing_only_a_common_word_is_no_keyword_hit(alice, vercel_world):
    query = "renewal of the Zephyr contract with new pricing terms"
    visible = PageSection.objects.visible_to(alice)
    renewal = visible.get(content__contains="renewal call")
    terms = keyword.keyword_query(tenant_id=alice.profile.tenant_id, corpus=CORPUS, text=query)
    assert renewal.pk in [row[0] for row in keyword.top(visible, terms, size=50)]  # BM25 finds the word
    lane = search._keyword_lane(visible, tenant_id=alice.profile.tenant_id, query=query)
    assert renewal.pk not in [row[0] for row in lane]  # but it holds too little of the query
    assert (
        search._keyword_lane(visible, tenant_id=alice.profile.tenant_id, query="Vercel renewal")[0][0]
        == renewal.pk
    )


def test_a_section_hidden_between_the_lanes_and_the_read_is_no_hit(alice, vercel_world, monkeypatch):
    public, _ = vercel_world
    section = PageSection.objects.visible_to(alice).get(content__contains="SSO")
    fuse = search.rrf

    def hide_then_fuse(*lanes, **kw):  # a revocation lands while the lanes' results are fused
        PageSection.objects.filter(pk=section.pk).update(acl=["user:nobody"])
        return fuse(*lanes, **kw)

    monkeypatch.setattr(search, "rrf", hide_then_fuse)
    assert section.pk not in {h.section.pk for h in search.section_search(user=alice, query="Vercel SSO")}
    assert all(
        r["page"] and section.pk not in {h.section.pk for h in r["hits"]}
        for r in search.page_search(user=alice, query="Vercel SSO")
    )


def test_the_similarity_floor_is_the_script_pairs(settings):
    """A section found by its embedding needs the floor of its and the query's scripts."""
    settings.CONTEXT_MIN_VECTOR_SIMILARITY, settings.CONTEXT_MIN_VECTOR_SIMILARITY_ZH = 0.3, 0.4
    settings.CONTEXT_MIN_VECTOR_SIMILARITY_CROSS = 0.2
    ranked = [
        RankedSection(1, 10, 0.03, {"vector_similarity": 0.25, "script_pair": "cross"}),
        RankedSection(2, 20, 0.02, {"vector_similarity": 0.25, "script_pair": "en"}),
        RankedSection(3, 30, 0.02, {"vector_similarity": 0.35, "script_pair": "zh"}),
        RankedSection(4, 40, 0.01, {"vector_similarity": 0.35, "script_pair": "en"}),
    ]
    assert [pid for pid, _ in rank_pages(ranked)] == [10, 40]


ENGLISH_NOTE = "Mobile app releases ship every second Thursday after the regression tests pass."


def test_a_short_chinese_query_finds_the_english_page_that_answers_it(alice, push, settings):
    from tests.wiki.conftest import slack

    push(slack(ENGLISH_NOTE, tags={"project": "Mobile"}))
    push(slack("The office coffee machine is descaled on Fridays.", tags={"project": "Office"}))
    found = search.page_search(user=alice, query="手机应用多久发布一次？", top_k=5)
    hits = [h for result in found for h in result["hits"] if "regression tests" in h.section.content]
    assert hits and hits[0].breakdown["script_pair"] == "cross"
    similarity = hits[0].breakdown["vector_similarity"]
    # Found by the cross-language floor: at the same-language one it would be missed.
    assert settings.CONTEXT_MIN_VECTOR_SIMILARITY_CROSS <= similarity < settings.CONTEXT_MIN_VECTOR_SIMILARITY
    assert search.page_search(user=alice, query="啊咧咧嘟嘟嘀嘀咕", top_k=5) == []  # nonsense: nothing
    assert (
        search.page_search(user=alice, query="火星基地的氧气配额是多少？", top_k=5) == []
    )  # nothing answers it
