"""Hybrid search over the page sections a reader may see: BM25 ‖ vectors → RRF, and pages
ranked by their sections' hits."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Max, QuerySet

from almanac.search import keyword, vectors
from almanac.search.embeddings import embed_query, is_noise
from almanac.search.fusion import rrf
from almanac.selectors import access_snapshot, user_access
from wiki.constants import CORPUS
from wiki.matching import entity_matcher
from wiki.models import PageSection
from wiki.selectors import TEXT_FIELDS, page_status_for

LANE_SIZE = 50
RRF_K = 60
MAX_QUERY_CHARS = 4000
# A search hit: its text plus what `section_out`/`page_out` show of it and its page.
_PAGE_FIELDS = (
    "id", "tenant_id", "entity_id", "slug", "kind", "title", "status", "status_container", "updated_at",
)  # fmt: skip
HIT_FIELDS = (*TEXT_FIELDS, "stale", "tenant_id", *(f"page__{f}" for f in _PAGE_FIELDS))


@dataclass
class SectionHit:
    section: PageSection
    score: float
    breakdown: dict


@dataclass
class RankedSection:
    """A search hit before any row is read: its id, its page and how it ranked."""

    id: int
    page_id: int
    score: float
    breakdown: dict


def _keyword_lane(visible: QuerySet, *, tenant_id: int, query: str) -> list[tuple]:
    """(id, BM25, page id, share of the query's weight the section holds), best first."""
    q = keyword.keyword_query(tenant_id=tenant_id, corpus=CORPUS, text=query)
    rows = keyword.top(visible, q, size=LANE_SIZE, extra=("page_id",), matched_terms=True)
    return [(pk, score, page_id, q.coverage(terms)) for pk, score, page_id, terms in rows]


def _vector_lane(visible: QuerySet, *, query: str) -> list[tuple]:
    """Vector top 50 inside the visible set (HNSW, with an exact top-up when short); none
    for a query the encoder reads as noise (`is_noise`: its neighbours would be arbitrary)."""
    vector = embed_query(query)
    if is_noise(vector):
        return []
    rows = visible.filter(embedding__isnull=False)
    return vectors.nearest(rows, vector, LANE_SIZE, extra=("page_id",))


def section_ranking(
    *, user, query: str, top_k: int = 50, exclude_section_ids: set[int] | None = None
) -> list[RankedSection]:
    """Hybrid ranking of the sections the user may see: BM25 top 50 ‖ vector top 50 → RRF (k=60).

    Stale sections are excluded (they wait for confirmation). `breakdown` has each lane's
    rank and raw score and the fused score. No section row is read: the lanes return each
    hit's page, which is all the context call needs to rank pages (it then reads its few
    pages itself; reading the 50 hits cost it ~2 ms).
    """
    query = (query or "").strip()[:MAX_QUERY_CHARS]
    if not query or top_k <= 0:
        return []
    with access_snapshot():  # one membership lookup for both lanes
        tenant_id = user_access(user)[0]
        if tenant_id is None:
            return []
        entity_matcher(tenant_id)  # teaches the segmenter this tenant's entity names (first use per process)
        visible = PageSection.objects.visible_to(user)
        if exclude_section_ids:
            visible = visible.exclude(id__in=exclude_section_ids)
        kw = _keyword_lane(visible, tenant_id=tenant_id, query=query)
        vec = _vector_lane(visible, query=query)
    fused = rrf([row[0] for row in kw], [row[0] for row in vec], k=RRF_K)[:top_k]
    kw_rank = {i: (r, s, p, c) for r, (i, s, p, c) in enumerate(kw, start=1)}
    vec_rank = {i: (r, d, p) for r, (i, d, p) in enumerate(vec, start=1)}
    ranked = []
    for section_id, score in fused:
        k, v = kw_rank.get(section_id), vec_rank.get(section_id)
        breakdown = {
            # Ranks only, no raw BM25 score: its idf counts the whole tenant, hidden sections
            # too, so the score would tell how common a word is where the reader cannot look.
            "keyword_rank": k[0] if k else None,
            "keyword_coverage": round(k[3], 4) if k else None,
            "vector_rank": v[0] if v else None,
            "vector_similarity": round(1.0 - float(v[1]), 4) if v else None,
            "rrf": round(score, 6),
        }
        ranked.append(RankedSection(section_id, (k or v)[2], score, breakdown))
    return ranked


def section_search(
    *, user, query: str, top_k: int = 50, exclude_section_ids: set[int] | None = None
) -> list[SectionHit]:
    """`section_ranking` with each hit's section and page read (one query)."""
    ranked = section_ranking(user=user, query=query, top_k=top_k, exclude_section_ids=exclude_section_ids)
    sections = PageSection.objects.select_related("page").only(*HIT_FIELDS).in_bulk([r.id for r in ranked])
    # A section deleted between the lanes and the read is no hit.
    return [
        SectionHit(section=sections[r.id], score=r.score, breakdown=r.breakdown)
        for r in ranked
        if r.id in sections
    ]


def relevant(breakdown: dict | None) -> bool:
    """The relevance floor: a section that holds enough of the query's weight in words
    (WIKI_MIN_KEYWORD_COVERAGE: not just its commonest word), or a vector neighbour that is
    actually similar (CONTEXT_MIN_VECTOR_SIMILARITY: the vector lane always returns its 50,
    however far)."""
    breakdown = breakdown or {}
    coverage = breakdown.get("keyword_coverage")
    if coverage is not None and coverage >= settings.WIKI_MIN_KEYWORD_COVERAGE:
        return True
    similarity = breakdown.get("vector_similarity")
    return similarity is not None and similarity >= settings.CONTEXT_MIN_VECTOR_SIMILARITY


def page_search(*, user, query: str, top_k: int = 10) -> list[dict]:
    """Pages ranked by their best relevant section hits (sum of the page's top-3 section RRF
    scores), as the context call ranks them: a page whose only hits are far vector
    neighbours does not outrank the page that has the word."""
    hits = [h for h in section_search(user=user, query=query, top_k=LANE_SIZE * 2) if relevant(h.breakdown)]
    grouped: dict[int, list[SectionHit]] = {}
    for hit in hits:
        grouped.setdefault(hit.section.page_id, []).append(hit)
    ranked = sorted(
        grouped.values(), key=lambda hs: (-sum(h.score for h in hs[:3]), hs[0].section.page.slug)
    )[:top_k]
    # A page's `updated_at` as this reader sees it: its newest visible section, never a
    # private section's change (one query for all the pages), and the status as it sees it.
    seen = {
        page_id: (at, containers)
        for page_id, at, containers in PageSection.objects.visible_to(user)
        .filter(page_id__in=[hs[0].section.page_id for hs in ranked])
        .order_by()
        .values("page_id")
        .annotate(newest=Max("updated_at"), containers=ArrayAgg("container_key", distinct=True))
        .values_list("page_id", "newest", "containers")
    }
    for hs in ranked:
        page = hs[0].section.page
        at, containers = seen.get(page.pk, (None, ()))
        page.visible_updated_at = at or max(h.section.updated_at for h in hs)
        page.visible_status = page_status_for(page, containers)
    return [{"page": hs[0].section.page, "score": sum(h.score for h in hs[:3]), "hits": hs} for hs in ranked]
