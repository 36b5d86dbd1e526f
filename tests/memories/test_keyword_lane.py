"""Candidate finding of the BM25 lane (`almanac.keyword.top`): narrowing and its fallback."""

from almanac import keyword
from memories.models import CORPUS, Memory
from tests.memories.conftest import unit


def _corpus(alice, remember):
    # "orbit" and "launch" are each in many memories, together in three.
    for i in range(6):
        remember(alice, f"orbit telemetry review number {i}", embedding=unit(100 + i))
        remember(alice, f"launch checklist item number {i}", embedding=unit(200 + i))
    return [
        remember(alice, f"orbit launch window moved to day {i}", embedding=unit(300 + i)) for i in range(3)
    ]


def _query(alice, text):
    return keyword.keyword_query(tenant_id=alice.profile.tenant_id, corpus=CORPUS, text=text)


def test_a_broad_finder_is_narrowed_to_pairs(alice, remember):
    _corpus(alice, remember)
    finder = _query(alice, "orbit launch").finder(common_share=1.0)
    assert finder.narrowed(budget=1000) is None  # few candidates: plain OR
    narrow = finder.narrowed(budget=8)
    assert narrow.clauses == [("launch", "orbit")] or narrow.clauses == [("orbit", "launch")]
    assert narrow.tsquery().count("&") == 1


def test_narrowed_lane_scores_docs_with_both_terms(alice, remember):
    both = _corpus(alice, remember)
    visible = Memory.objects.visible_to(alice)
    query = _query(alice, "orbit launch")
    wide = keyword.top(visible, query, size=5, common_share=1.0, budget=1000)
    narrow = keyword.top(visible, query, size=5, common_share=1.0, budget=8)
    assert {pk for pk, _ in narrow} == {m.pk for m in both}  # only the pairs were candidates
    assert [pk for pk, _ in wide][:3] == [pk for pk, _ in narrow]  # and they are the BM25 top
    assert len(wide) == 5


def test_a_nearly_empty_narrow_lane_falls_back_to_the_plain_finder(alice, remember):
    _corpus(alice, remember)
    visible = Memory.objects.visible_to(alice)
    query = _query(alice, "orbit launch")
    # size 20: three pair matches are fewer than a fifth of the lane, so the plain finder runs
    rows = keyword.top(visible, query, size=20, common_share=1.0, budget=8)
    assert len(rows) == 15
