"""Permission-aware reads of the wiki. Every path goes through `PageSection.objects.visible_to`."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet, Subquery
from django.http import Http404

from almanac import keyword, search, vectors
from almanac.models import Tenant
from almanac.selectors import access_snapshot, snapshot_memo, user_access, user_tenant
from wiki import conf, folding
from wiki.models import Entity, Page, PageSection, visible_sections_sql
from wiki.services.sections import CORPUS
from wiki.services.summary import summary_digest

LANE_SIZE = 50
# Index columns a reader never needs (the embedding alone is 512 floats to parse per row).
SEARCH_FIELDS = ("embedding", "tokens", "tf", "search_vector")
# What a page's text, sources and version are made of (newest_sections_for_pages).
TEXT_FIELDS = (
    "id",
    "page_id",
    "title",
    "content",
    "container_name",
    "occurred_at",
    "updated_at",
    "source_list",
)
# A search hit: its text plus what `section_out`/`page_out` show of it and its page.
_PAGE_FIELDS = ("id", "tenant_id", "entity_id", "slug", "kind", "title", "status", "updated_at")
HIT_FIELDS = (*TEXT_FIELDS, "stale", "tenant_id", *(f"page__{f}" for f in _PAGE_FIELDS))
RRF_K = 60
MIN_LATIN_KEY = 3
MAX_QUERY_CHARS = 4000

# --- Entities in text -------------------------------------------------------------------


@dataclass
class _Matcher:
    stamp: tuple
    pattern: re.Pattern | None
    by_key: dict[str, list[int]] = field(default_factory=dict)
    entities: dict[int, Entity] = field(default_factory=dict)

    def get(self, kind: str, key: str) -> Entity | None:
        return next(
            (
                self.entities[pk]
                for pk in self.by_key.get(key, [])
                if self.entities[pk].kind == kind and self.entities[pk].key == key
            ),
            None,
        )

    def find(self, text: str) -> list[Entity]:
        if self.pattern is None or not text:
            return []
        found: dict[int, Entity] = {}
        for match in self.pattern.finditer(_fold_text(text)):
            for pk in self.by_key.get(match.group(), []):
                found.setdefault(pk, self.entities[pk])
        return list(found.values())


_matchers: dict[int, _Matcher] = {}
_checked: dict[int, float] = {}  # tenant id → when its stamp was last compared (monotonic)
_matchers_lock = threading.Lock()


def entities_changed(tenant_id: int) -> None:
    """An entity of the tenant was saved or deleted in this process: look again next time."""
    with _matchers_lock:
        _checked.pop(tenant_id, None)


def entity_matcher(tenant_id: int, *, max_age: float | None = None) -> _Matcher:
    """One alternation regex of all folded names/aliases of a tenant, rebuilt when entities change.

    Whether they changed is a count and a max over the tenant's entities (O(entities)),
    looked at once per `max_age` seconds per process (WIKI_ENTITY_CHECK_SECONDS for
    requests; the compiler passes 0) and right after a change made in this process.
    """
    max_age = conf.WIKI_ENTITY_CHECK_SECONDS if max_age is None else max_age
    cached = _matchers.get(tenant_id)
    checked = _checked.get(tenant_id)
    if cached is not None and checked is not None and time.monotonic() - checked < max_age:
        return cached
    agg = snapshot_memo(  # checked once per request
        ("entity-stamp", tenant_id),
        lambda: Entity.objects.filter(tenant_id=tenant_id).aggregate(n=Count("id"), at=Max("updated_at")),
    )
    stamp = (agg["n"], agg["at"])
    if cached is not None and cached.stamp == stamp:
        with _matchers_lock:
            _checked[tenant_id] = time.monotonic()
        return cached
    entities = {e.pk: e for e in Entity.objects.filter(tenant_id=tenant_id)}
    by_key: dict[str, list[int]] = {}
    for entity in entities.values():
        for key in {entity.key, *entity.alias_keys}:
            by_key.setdefault(key, []).append(entity.pk)
    search.add_words([e.name for e in entities.values()] + [a for e in entities.values() for a in e.aliases])
    keys = [
        k
        for k in sorted(by_key, key=len, reverse=True)
        if len(k) >= (2 if folding.has_cjk(k) else MIN_LATIN_KEY)
    ]
    latin = [re.escape(k) for k in keys if not folding.has_cjk(k)]
    cjk = [re.escape(k) for k in keys if folding.has_cjk(k)]
    parts = ([rf"(?<!\w)(?:{'|'.join(latin)})(?!\w)"] if latin else []) + (
        [f"(?:{'|'.join(cjk)})"] if cjk else []
    )
    pattern = re.compile("|".join(parts)) if parts else None
    matcher = _Matcher(stamp=stamp, pattern=pattern, by_key=by_key, entities=entities)
    with _matchers_lock:
        _matchers[tenant_id] = matcher
        _checked[tenant_id] = time.monotonic()
    return matcher


def _fold_text(text: str) -> str:
    return re.sub(r"[\s\"'`.,;:!?()\[\]{}<>|/\\]+", " ", folding.normalize(text))


def entities_in_text(*, tenant: Tenant, text: str) -> list[Entity]:
    """Entities whose folded name or alias occurs in `text`, in order of first mention.

    Lexical (case, width, legal suffixes folded); CJK names match as substrings, Latin
    names on word boundaries.
    """
    return entity_matcher(tenant.pk).find(text)


# --- Pages and sections -----------------------------------------------------------------


def _person_handles(page: Page) -> list[str]:
    from wiki.services.people import person_handles

    if page.kind != Entity.Kind.PERSON:
        return []
    if Page.entity.is_cached(page):
        user = page.entity.user
    else:  # a page read without its entity (the context call's light read): one query
        entity = (
            Entity.objects.select_related("user").only("user__username", "user__email").get(pk=page.entity_id)
        )
        user = entity.user
    return person_handles(user) if user is not None else []


def page_sections_for_user(*, user, page: Page) -> QuerySet[PageSection]:
    """The page's sections the user may see, non-stale, oldest first.

    A person page also shows that person's visible activity (sections they authored).
    """
    condition = Q(page=page)
    handles = _person_handles(page)
    if handles:
        condition |= Q(authors__overlap=handles)
    return (
        PageSection.objects.visible_to(user)
        .filter(condition)
        .select_related("page")
        .order_by("occurred_at", "id")
    )


def newest_sections_for_pages(*, user, pages: list[Page], limit: int) -> dict[int, list[PageSection]]:
    """Per page, its `limit` newest sections the user may see (page_sections_for_user), newest first.

    One statement for all pages: a LATERAL read per page walks its (page, occurred_at)
    index backwards and stops at `limit`, and the user's keys are sent once (three ORM
    queries cost ~8 ms of Python, half of it building the SQL). A person page also shows
    the person's activity elsewhere, so it keeps its own query.
    """
    out: dict[int, list[PageSection]] = {page.pk: [] for page in pages}
    plain = []
    for page in pages:
        if _person_handles(page):
            visible = page_sections_for_user(user=user, page=page).select_related(None).only(*TEXT_FIELDS)
            out[page.pk] = list(visible.order_by("-occurred_at", "-id")[:limit])
        else:
            plain.append(page.pk)
    visible = visible_sections_sql(user, table="s") if plain else None
    if visible is None:
        return out
    columns = ", ".join(f's."{PageSection._meta.get_field(f).column}"' for f in TEXT_FIELDS)
    sections = PageSection.objects.raw(
        f"""SELECT {columns} FROM unnest(%s::bigint[]) AS p(id) CROSS JOIN LATERAL (
                SELECT {columns} FROM {PageSection._meta.db_table} s
                WHERE s.page_id = p.id AND {visible[0]}
                ORDER BY s.occurred_at DESC, s.id DESC LIMIT %s) s""",
        [plain, *visible[1], limit],
    )
    for section in sections:
        out[section.page_id].append(section)
    for pid in plain:
        out[pid].sort(key=lambda s: (s.occurred_at, s.id), reverse=True)
    return out


def stale_section_count(*, user, page_ids: list[int] | None = None) -> int:
    """Sections that would be visible to the user but are stale (awaiting confirmation)."""
    qs = PageSection.objects.visible_to(user, include_stale=True).filter(stale=True)
    if page_ids is not None:
        qs = qs.filter(page_id__in=page_ids)
    return qs.count()


def page_list(*, user, q: str = "", kind: str = "") -> QuerySet[Page]:
    """Pages with at least one visible, non-stale section, with how many the user sees."""
    visible = PageSection.objects.visible_to(user).filter(page_id=OuterRef("pk"))
    tenant = user_tenant(user)
    if tenant is None:
        return Page.objects.none()
    counts = visible.order_by().values("page_id").annotate(c=Count("id")).values("c")
    qs = (
        Page.objects.filter(tenant=tenant)
        .filter(Exists(visible))
        .annotate(
            visible_sections=Subquery(counts[:1]),
            # The reader's own "last changed": a private section's edit is not visible through it.
            visible_updated_at=Subquery(visible.order_by("-updated_at").values("updated_at")[:1]),
        )
        .select_related("entity")
    )
    if kind:
        qs = qs.filter(kind=kind)
    if q:
        folded = folding.fold(q)
        qs = qs.filter(
            Q(title__icontains=q)
            | Q(slug__icontains=q)
            | Q(entity__key__icontains=folded)
            | Q(entity__alias_keys__contains=[folded])
        )
    return qs.order_by("kind", "title")


def page_get_for_user(*, user, slug: str) -> Page:
    """The page if the user may see at least one of its sections (stale ones count); else 404."""
    tenant = user_tenant(user)
    page = Page.objects.filter(tenant=tenant, slug=slug).select_related("entity", "entity__user").first()
    if (
        page is None
        or not PageSection.objects.visible_to(user, include_stale=True).filter(page=page).exists()
    ):
        raise Http404("page not found")
    return page


def page_summary_for_user(*, user, page: Page, visible_ids: set[int]) -> str:
    """The page summary, only if it is current and the user sees every section it was made from."""
    if not page.summary or not page.summary_section_ids:
        return ""
    current = list(PageSection.objects.filter(page=page, stale=False).only("id", "content_digest"))
    if summary_digest(current) != page.summary_digest:
        return ""
    return page.summary if set(page.summary_section_ids) <= visible_ids else ""


# --- Hybrid search ----------------------------------------------------------------------


@dataclass
class SectionHit:
    section: PageSection
    score: float
    breakdown: dict


def _keyword_lane(visible: QuerySet, *, tenant_id: int, query: str) -> list[tuple[int, float]]:
    q = keyword.keyword_query(tenant_id=tenant_id, corpus=CORPUS, text=query)
    return keyword.top(visible, q, size=LANE_SIZE)


def _vector_lane(visible: QuerySet, *, query: str) -> list[tuple[int, float]]:
    """Vector top 50 inside the visible set (HNSW, with an exact top-up when short)."""
    rows = visible.filter(embedding__isnull=False)
    return vectors.nearest(rows, search.embed_query(query), LANE_SIZE)


def section_search(
    *,
    user,
    query: str,
    top_k: int = 50,
    exclude_section_ids: set[int] | None = None,
    with_pages: bool = True,
) -> list[SectionHit]:
    """Hybrid search of the sections the user may see: BM25 top 50 ‖ vector top 50 → RRF (k=60).

    Stale sections are excluded (they wait for confirmation). `breakdown` has each lane's
    rank and raw score and the fused score. `with_pages=False`: the hits carry their text
    fields and page id only (the context call reads its few pages itself; joining the page
    of every hit cost it ~1.5 ms).
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
    fused = search.rrf([i for i, _ in kw], [i for i, _ in vec], k=RRF_K)[:top_k]
    kw_rank = {i: (r, s) for r, (i, s) in enumerate(kw, start=1)}
    vec_rank = {i: (r, d) for r, (i, d) in enumerate(vec, start=1)}
    rows = (
        PageSection.objects.select_related("page").only(*HIT_FIELDS)
        if with_pages
        else PageSection.objects.only(*TEXT_FIELDS)
    )
    sections = rows.in_bulk([i for i, _ in fused])
    hits = []
    for section_id, score in fused:
        k, v = kw_rank.get(section_id), vec_rank.get(section_id)
        breakdown = {
            "keyword_rank": k[0] if k else None,
            "keyword_score": round(float(k[1]), 4) if k else None,
            "vector_rank": v[0] if v else None,
            "vector_similarity": round(1.0 - float(v[1]), 4) if v else None,
            "rrf": round(score, 6),
        }
        hits.append(SectionHit(section=sections[section_id], score=score, breakdown=breakdown))
    return hits


def page_search(*, user, query: str, top_k: int = 10) -> list[dict]:
    """Pages ranked by their best section hits (sum of the page's top-3 section RRF scores)."""
    hits = section_search(user=user, query=query, top_k=LANE_SIZE * 2)
    grouped: dict[int, list[SectionHit]] = {}
    for hit in hits:
        grouped.setdefault(hit.section.page_id, []).append(hit)
    ranked = sorted(
        grouped.values(), key=lambda hs: (-sum(h.score for h in hs[:3]), hs[0].section.page.slug)
    )[:top_k]
    return [{"page": hs[0].section.page, "score": sum(h.score for h in hs[:3]), "hits": hs} for hs in ranked]
