"""Hybrid search over the page sections a reader may see: BM25 ‖ vectors → RRF, and pages
ranked by their sections' hits."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from django.conf import settings
from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Exists, Max, OuterRef, QuerySet

from almanac.search import keyword, vectors
from almanac.search.embeddings import embed_query, is_noise
from almanac.search.floors import Floors, script_pair
from almanac.search.fusion import rrf
from almanac.search.query import query_forms
from almanac.search.text import is_cjk
from almanac.selectors import access_snapshot, user_access
from wiki.constants import CORPUS
from wiki.matching import entity_matcher
from wiki.models import Page, PageSection
from wiki.selectors import TEXT_FIELDS
from wiki.status import page_status_for

LANE_SIZE = 50
RRF_K = 60
# A page's score: its best relevant hit's plus this much of its other relevant hits'.
PAGE_REST_WEIGHT = 0.3
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
    """(id, BM25, page id, share of the query's weight the section holds), best first: the
    BM25 top 50 that hold at least WIKI_MIN_KEYWORD_COVERAGE of the query's weight (a
    section sharing only the query's commonest word is no keyword hit, and would otherwise
    lift a far vector neighbour in the fusion)."""
    q = keyword.keyword_query(tenant_id=tenant_id, corpus=CORPUS, text=query)
    rows = keyword.top(visible, q, size=LANE_SIZE, extra=("page_id",), matched_terms=True)
    floor = settings.WIKI_MIN_KEYWORD_COVERAGE
    scored = ((pk, score, page_id, q.coverage(terms)) for pk, score, page_id, terms in rows)
    return [row for row in scored if row[3] >= floor]


def _vector_lane(visible: QuerySet, *, query: str) -> list[tuple]:
    """(id, cosine distance, page id, the section holds Chinese): vector top 50 inside the
    visible set (HNSW, with an exact top-up when short); none for a query the encoder reads
    as noise (`is_noise`: its neighbours would be arbitrary)."""
    vector = embed_query(query)
    if is_noise(vector):
        return []
    rows = visible.filter(embedding__isnull=False)
    return vectors.nearest(rows, vector, LANE_SIZE, extra=("page_id",), cjk_of="content")


def section_ranking(
    *, user, query: str, top_k: int = 50, exclude_section_ids: set[int] | None = None
) -> list[RankedSection]:
    """Hybrid ranking of the sections the user may see: for each form of the query (the
    whole text and, for a dialogue or a long text, its latest turn: `query_forms`), BM25
    top 50 ‖ vector top 50 → RRF (k=60) of all the lanes.

    Stale sections are excluded (they wait for confirmation). `breakdown` has each lane's
    best rank, the best coverage and similarity over the forms, the query's and the
    section's scripts (`script_pair`: "en", "zh" or "cross", for the floor), and the fused score. No
    section row is read: the lanes return each hit's page, which is all the context call
    needs to rank pages (it then reads its few pages itself; reading the 50 hits cost it
    ~2 ms).
    """
    forms = query_forms(query or "")
    if not forms or top_k <= 0:
        return []
    with access_snapshot():  # one membership lookup for all the lanes
        tenant_id = user_access(user)[0]
        if tenant_id is None:
            return []
        entity_matcher(tenant_id)  # teaches the segmenter this tenant's entity names (first use per process)
        visible = PageSection.objects.visible_to(user)
        if exclude_section_ids:
            visible = visible.exclude(id__in=exclude_section_ids)
        lanes = [
            (_keyword_lane(visible, tenant_id=tenant_id, query=form), _vector_lane(visible, query=form))
            for form in forms
        ]
    fused = rrf(*([row[0] for row in lane] for pair in lanes for lane in pair), k=RRF_K)[:top_k]
    query_zh = is_cjk(query)
    kw: dict[int, tuple] = {}  # id: (best rank, page id, best coverage)
    vec: dict[int, tuple] = {}  # id: (best rank, page id, best similarity, script pair)
    for kw_lane, vec_lane in lanes:
        for rank, (pk, _, page_id, coverage) in enumerate(kw_lane, start=1):
            best = kw.get(pk, (rank, page_id, coverage))
            kw[pk] = (min(best[0], rank), page_id, max(best[2], coverage))
        for rank, (pk, distance, page_id, zh) in enumerate(vec_lane, start=1):
            similarity = 1.0 - float(distance)
            best = vec.get(pk, (rank, page_id, similarity))
            pair = script_pair(query_zh=query_zh, doc_zh=bool(zh))
            vec[pk] = (min(best[0], rank), page_id, max(best[2], similarity), pair)
    ranked = []
    for section_id, score in fused:
        k, v = kw.get(section_id), vec.get(section_id)
        breakdown = {
            # Ranks only, no raw BM25 score: its idf counts the whole tenant, hidden sections
            # too, so the score would tell how common a word is where the reader cannot look.
            "keyword_rank": k[0] if k else None,
            "keyword_coverage": round(k[2], 4) if k else None,
            "vector_rank": v[0] if v else None,
            "vector_similarity": round(v[2], 4) if v else None,
            "script_pair": v[3] if v else None,
            "rrf": round(score, 6),
        }
        ranked.append(RankedSection(section_id, (k or v)[1], score, breakdown))
    return ranked


def _read_hits(user, ranked: list[RankedSection]) -> list[SectionHit]:
    """The ranked sections with their pages, read through the access filter again: a
    section deleted, hidden or revoked between the lanes and this read is no hit."""
    sections = (
        PageSection.objects.visible_to(user)
        .select_related("page")
        .only(*HIT_FIELDS)
        .in_bulk([r.id for r in ranked])
    )
    return [
        SectionHit(section=sections[r.id], score=r.score, breakdown=r.breakdown)
        for r in ranked
        if r.id in sections
    ]


def section_search(
    *, user, query: str, top_k: int = 50, exclude_section_ids: set[int] | None = None
) -> list[SectionHit]:
    """`section_ranking` with each hit's section and page read (one query)."""
    return _read_hits(
        user, section_ranking(user=user, query=query, top_k=top_k, exclude_section_ids=exclude_section_ids)
    )


def similarity_floor(pair: str) -> float:
    """The least cosine a section found by its embedding needs, by the query's and its
    script (`almanac.search.floors`): CONTEXT_MIN_VECTOR_SIMILARITY (both English),
    CONTEXT_MIN_VECTOR_SIMILARITY_ZH (both Chinese), CONTEXT_MIN_VECTOR_SIMILARITY_CROSS
    (one of each: a question and its answer in two languages meet lower)."""
    return Floors(
        en=settings.CONTEXT_MIN_VECTOR_SIMILARITY,
        zh=settings.CONTEXT_MIN_VECTOR_SIMILARITY_ZH,
        cross=settings.CONTEXT_MIN_VECTOR_SIMILARITY_CROSS,
    ).of(pair)


def relevant(breakdown: dict | None) -> bool:
    """The relevance floor: a section that holds enough of the query's weight in words
    (WIKI_MIN_KEYWORD_COVERAGE: not just its commonest word), or a vector neighbour that is
    actually similar (`similarity_floor` for the query's and the section's scripts: the
    vector lane always returns its 50, however far)."""
    breakdown = breakdown or {}
    coverage = breakdown.get("keyword_coverage")
    if coverage is not None and coverage >= settings.WIKI_MIN_KEYWORD_COVERAGE:
        return True
    similarity = breakdown.get("vector_similarity")
    if similarity is None:
        return False
    return similarity >= similarity_floor(breakdown.get("script_pair") or "en")


def named_pages(*, user, tenant_id: int, text: str) -> tuple[list, dict[int, int]]:
    """Wiki entities named in `text` (names and aliases) whose page shows the user at least
    one section, in order of mention, and {entity id: page id}.

    An entity whose page shows the user nothing is dropped: its canonical name ("Nightingale
    Holdings" for a text saying "nightingale") would tell them the page exists.
    """
    entities = entity_matcher(tenant_id).find(text)
    if not entities:
        return [], {}
    shown = PageSection.objects.visible_to(user).filter(page_id=OuterRef("pk"))
    pages = dict(
        Page.objects.filter(tenant_id=tenant_id, entity__in=[e.pk for e in entities])
        .filter(Exists(shown))
        .values_list("entity_id", "id")
    )
    return [e for e in entities if e.pk in pages], pages


def rank_pages(
    ranked: list[RankedSection], named_page_ids: list[int] = (), seen_pages: set[int] = frozenset()
) -> list[tuple[int, float]]:
    """(page id, score) best first, the one page ranking of wiki search and the context call:
    pages the query names by entity first (in the order it names them), then the pages of
    relevant section hits by their best hit's fused score plus PAGE_REST_WEIGHT of their
    other hits' (a page with one exact hit is not outranked by a page with many weak ones).
    A hit below the relevance floor (`relevant`) counts for nothing; pages in `seen_pages`
    (returned by an earlier pass) are left out."""
    by_page: dict[int, list[float]] = {}
    for hit in ranked:
        if relevant(hit.breakdown):
            by_page.setdefault(hit.page_id, []).append(float(hit.score))
    scored = {
        pid: max(scores) + PAGE_REST_WEIGHT * (sum(scores) - max(scores)) for pid, scores in by_page.items()
    }
    named = [pid for pid in dict.fromkeys(named_page_ids) if pid not in seen_pages]
    rest = sorted(
        (pid for pid in scored if pid not in seen_pages and pid not in named), key=lambda p: (-scored[p], p)
    )
    top = max(scored.values(), default=0.0)
    # Named pages rank first; their score is the best score seen (or their own, if higher).
    return [(pid, max(scored.get(pid, 0.0), top)) for pid in named] + [(pid, scored[pid]) for pid in rest]


def page_search(*, user, query: str, top_k: int = 10) -> list[dict]:
    """Pages ranked as the context call ranks them (`rank_pages`), each with its relevant
    section hits, best first; one membership lookup serves all of its reads."""
    with access_snapshot():
        return _page_search(user=user, query=query, top_k=top_k)


def _page_search(*, user, query: str, top_k: int) -> list[dict]:
    tenant_id = user_access(user)[0]
    if tenant_id is None or top_k <= 0:
        return []
    ranked = section_ranking(user=user, query=query, top_k=LANE_SIZE * 2)
    if not ranked:
        return []  # a blank or noise query names no page either
    entities, pages = named_pages(user=user, tenant_id=tenant_id, text=query)
    order = rank_pages(ranked, [pages[e.pk] for e in entities])[:top_k]
    wanted = {pid for pid, _ in order}
    hits = _read_hits(user, [r for r in ranked if r.page_id in wanted and relevant(r.breakdown)])
    by_page: dict[int, list[SectionHit]] = {}
    for hit in hits:
        by_page.setdefault(hit.section.page_id, []).append(hit)
    # A named page with no hit of its own is read on its own.
    bare = Page.objects.in_bulk([pid for pid in wanted if pid not in by_page])
    # A page's `updated_at` as this reader sees it: its newest visible section, never a
    # private section's change (one query for all the pages), and the status as it sees it.
    seen = {
        page_id: (at, containers)
        for page_id, at, containers in PageSection.objects.visible_to(user)
        .filter(page_id__in=wanted)
        .order_by()
        .values("page_id")
        .annotate(newest=Max("updated_at"), containers=ArrayAgg("container_key", distinct=True))
        .values_list("page_id", "newest", "containers")
    }
    results = []
    for pid, score in order:
        page_hits = by_page.get(pid, [])
        page = page_hits[0].section.page if page_hits else bare.get(pid)
        if page is None or pid not in seen:  # gone, or nothing of it visible any more
            continue
        at, containers = seen[pid]
        page.visible_updated_at = at
        page.visible_status = page_status_for(page, containers)
        results.append({"page": page, "score": score, "hits": page_hits})
    return results


# A task that names no entity but describes one (its industry, city, size or what happened
# to it): the customer or project whose page holds most of the task's words, over all its
# sections (a profile says the industry and city, a kickoff the integration). One leading
# by DESCRIBED_LEAD is the entity described; several close ones (at most DESCRIBED_MAX) are
# candidates, each named; more than that, the task describes no one entity.
DESCRIBED_HITS = 5
DESCRIBED_LEAD = 1.5
DESCRIBED_MAX = 3
DESCRIBED_KINDS = ("customer", "project")
# The kind a task says it describes ("our health customer", "那个物流项目"): only entities of
# that kind are candidates (a product's page names its customers, "Norwick Health" among them).
_KIND_WORDS = {
    "customer": re.compile(r"\b(?:customers?|clients?|accounts?)\b|客户|顾客", re.I),
    "project": re.compile(r"\b(?:projects?|products?)\b|项目|产品", re.I),
}


def _described_kinds(task: str) -> tuple[str, ...]:
    """The entity kinds a task describes: the one it says, or both when it says neither or both."""
    said = tuple(kind for kind, words in _KIND_WORDS.items() if words.search(task))
    return said if len(said) == 1 else DESCRIBED_KINDS


def described_pages(
    *, user, tenant_id: int, ranked: list[RankedSection], task: str = ""
) -> tuple[list, dict[int, int]]:
    """(entities, {entity id: page id}) a task describes without naming, best first, read
    through the access filter: those whose page holds the most of the task's weight in words
    (`_described_by_words`), else those the text of its DESCRIBED_HITS best relevant
    sections names, weighted 1/rank. One entity when it leads the next by DESCRIBED_LEAD,
    else the close candidates (those within that factor of the best)."""
    weight = _described_by_words(user=user, tenant_id=tenant_id, task=task) if task else {}
    if not weight:
        weight = _described_by_hits(user=user, tenant_id=tenant_id, ranked=ranked)
    order = sorted(weight, key=lambda pk: -weight[pk])
    if not order:
        return [], {}
    chosen = [pk for pk in order if weight[pk] * DESCRIBED_LEAD >= weight[order[0]]]
    if len(chosen) > DESCRIBED_MAX:
        return [], {}
    shown = PageSection.objects.visible_to(user).filter(page_id=OuterRef("pk"))
    pages = dict(
        Page.objects.filter(tenant_id=tenant_id, entity__in=chosen)
        .filter(Exists(shown))
        .values_list("entity_id", "id")
    )
    entities = entity_matcher(tenant_id).entities
    return [entities[pk] for pk in chosen if pk in pages and pk in entities], pages


def _described_by_words(*, user, tenant_id: int, task: str) -> dict[int, float]:
    """{entity id: share of the task's weight (IDF) its page's visible sections hold
    together}, for the customers and projects among the pages of the task's BM25 top
    sections that hold at least WIKI_MIN_KEYWORD_COVERAGE. The share is of the words some
    section holds: a task's words nobody wrote ("which system do we…") describe no one."""
    q = keyword.keyword_query(tenant_id=tenant_id, corpus=CORPUS, text=task)
    if q.empty or len(q.terms) < 2:
        return {}
    # Every page holding a word counts, a word common in a small tenant too ("seat" in 18 of
    # 269 sections): the weights below say how much each word tells the pages apart.
    rows = keyword.top(
        PageSection.objects.visible_to(user),
        q,
        size=LANE_SIZE,
        extra=("page_id",),
        matched_terms=True,
        few=settings.KEYWORD_CANDIDATE_BUDGET // 4,
    )
    held: dict[int, set[str]] = {}
    for _, _, page_id, terms in rows:
        held.setdefault(page_id, set()).update(terms)
    owners = dict(
        Page.objects.filter(id__in=list(held), entity__kind__in=_described_kinds(task)).values_list(
            "id", "entity_id"
        )
    )
    held = {pid: terms for pid, terms in held.items() if pid in owners}
    # A word weighs its IDF, more when fewer of these pages hold it: what tells them apart
    # (one that all of them hold tells them apart little).
    pages = {t: sum(t in terms for terms in held.values()) for t in q.terms}
    weigh = {t: q.idf[t] * math.log((1 + len(held)) / pages[t]) for t in q.terms if pages[t]}
    known = sum(weigh.values())
    floor = settings.WIKI_MIN_KEYWORD_COVERAGE
    weight: dict[int, float] = {}
    for page_id, terms in held.items():
        share = sum(weigh.get(t, 0.0) for t in terms) / known if known else 0.0
        if share >= floor:
            weight[owners[page_id]] = max(weight.get(owners[page_id], 0.0), share)
    return weight


def _described_by_hits(*, user, tenant_id: int, ranked: list[RankedSection]) -> dict[int, float]:
    """{entity id: weight}: the non-person entities the text of the task's DESCRIBED_HITS
    best relevant sections names, each hit weighing 1/its rank."""
    hits = [r for r in ranked if relevant(r.breakdown)][:DESCRIBED_HITS]
    if not hits:
        return {}
    texts = dict(
        PageSection.objects.visible_to(user).filter(id__in=[r.id for r in hits]).values_list("id", "content")
    )
    matcher = entity_matcher(tenant_id)
    weight: dict[int, float] = {}
    for rank, hit in enumerate(hits, start=1):
        for entity, _ in matcher.find_matches(texts.get(hit.id, "")):
            if entity.kind != "person":
                weight[entity.pk] = weight.get(entity.pk, 0.0) + 1.0 / rank
    return weight


def lookalike(first: str, second: str) -> bool:
    """Two names that share most of their start ("Norwick Health" / "Norwick Robotics",
    "鼎川制造" / "鼎川能源"): a common prefix of at least two Chinese characters or one whole
    Latin word of four letters or more, covering at least 40% of the shorter name."""
    a, b = first.casefold().strip(), second.casefold().strip()
    if a == b:
        return False
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    prefix = a[:common]
    if not is_cjk(prefix):
        # whole words only: "nor" of "norwick" and "northgate" is no shared name
        cut = max(prefix.rfind(" "), 0) if common < min(len(a), len(b)) or " " in prefix else common
        prefix = prefix[:cut].strip() if cut else (prefix if common == min(len(a), len(b)) else "")
        if len(prefix) < 4:
            return False
    elif len(prefix) < 2:
        return False
    return len(prefix) >= 0.4 * min(len(a), len(b))
