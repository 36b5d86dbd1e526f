"""Candidate finding of the BM25 lane (`almanac.search.keyword.top`): narrowing and its fallback."""

from almanac.search import keyword
from memories.models import CORPUS, Memory
from tests.memories.conftest import unit


def _corpus(alice, remember):
    # "orbit" and "launch" are each in many memories, together in three.
    for i in range(6):
        remember(alice, f"orbit telemetry review number {i}", embedding=unit(100 + i))
        remember(alice, f"launch checklist item number {i}", embedding=unit(200 + i))
    return [remember(alice, f"orbit launch window number {i}", embedding=unit(300 + i)) for i in range(3)]


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


def test_sql_scores_are_bm25(alice, remember):
    # The SQL expression against BM25 computed here from the stored term frequencies.
    import math

    from almanac.search import keyword
    from memories.models import CORPUS, Memory

    for text in (
        "Apollo budget approved by the CFO",
        "Apollo launch moved; the Apollo budget grows",
        "tea with lemon",
        "budget review for Zephyr next week, budget owner Carol",
    ):
        remember(alice, text)
    query = keyword.keyword_query(
        tenant_id=alice.profile.tenant_id, corpus=CORPUS, text="Apollo budget Carol"
    )
    scored = dict(keyword.top(Memory.objects.visible_to(alice), query, size=10, common_share=1.0))
    rows = {m.pk: m for m in Memory.objects.filter(pk__in=scored)}
    assert len(scored) == 3
    for pk, score in scored.items():
        tf, length = rows[pk].tf, rows[pk].doc_len
        expected = sum(
            query.idf[t]
            * tf[t]
            * (keyword.K1 + 1)
            / (tf[t] + keyword.K1 * (1 - keyword.B + keyword.B * length / query.avg_len))
            for t in query.terms
            if t in tf
        )
        assert math.isclose(score, expected, rel_tol=1e-9)


def test_lanes_return_extra_columns_in_every_scan(alice, remember):
    from almanac.search import vectors

    both = _corpus(alice, remember)
    visible = Memory.objects.visible_to(alice)
    owners = {m.pk: m.owner_id for m in Memory.objects.filter(owner=alice)}
    rows = keyword.top(visible, _query(alice, "orbit launch"), size=5, common_share=1.0, extra=("owner_id",))
    assert rows and all(owner == owners[pk] for pk, _, owner in rows)
    for exact in (False, True):  # the HNSW scan and the exact one
        hits = vectors.nearest(visible, unit(300), 4, exact=exact, extra=("owner_id", "memory_type"))
        assert hits[0][0] == both[0].pk and hits[0][1] < 1e-6
        assert all(len(row) == 4 and row[2] == owners[row[0]] for row in hits)
    # The literal of a query vector is built once and reused.
    assert vectors.vector_literal(unit(300)) is vectors.vector_literal(unit(300))


def _found(alice, query):
    from memories import selectors

    return [h.memory.content for h in selectors.memory_search(user=alice, query=query)
            if h.breakdown.get("keyword_rank") is not None]  # fmt: skip


def test_an_amount_with_thousands_separators_is_one_number(alice, remember):
    remember(alice, "给Vercel的报价是¥1,200", embedding=unit(400))
    for query in ("1200", "1,200", "１２００", "¥1,200"):
        assert _found(alice, query) == ["给Vercel的报价是¥1,200"], query


def test_traditional_and_simplified_chinese_find_each_other(alice, remember):
    remember(alice, "華為的報價是三萬元", embedding=unit(402))
    for query in ("华为 报价", "華為", "报价"):
        assert _found(alice, query) == ["華為的報價是三萬元"], query
