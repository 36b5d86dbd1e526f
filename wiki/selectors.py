"""Permission-aware reads of the wiki. Every path goes through `PageSection.objects.visible_to`."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.contrib.postgres.aggregates import ArrayAgg
from django.db import connection
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.http import Http404

from almanac import keyword, search, vectors
from almanac.models import Tenant
from almanac.selectors import access_snapshot, int_array, snapshot_memo, user_access, user_tenant
from wiki import conf, folding
from wiki.models import Entity, Page, PageSection, section_sources, visible_sections_sql
from wiki.services.sections import CORPUS
from wiki.services.summary import summary_digest

LANE_SIZE = 50
# Index columns a reader never needs (the embedding alone is 512 floats to parse per row).
SEARCH_FIELDS = ("embedding", "tokens", "tf", "search_vector")
# What a page's text, sources and version are made of (page_texts_for_reader).
TEXT_FIELDS = (
    "id",
    "page_id",
    "title",
    "content",
    "container_name",
    "occurred_at",
    "updated_at",
    "source_list",
    "content_digest",
)
# A search hit: its text plus what `section_out`/`page_out` show of it and its page.
_PAGE_FIELDS = (
    "id", "tenant_id", "entity_id", "slug", "kind", "title", "status", "status_container", "updated_at",
)  # fmt: skip
# Those columns inside the LATERAL read, and out of it; times as integer microseconds since the epoch
# (exact, and Django's per-value timestamptz loader cost ~1 ms a call for ~300 values).
_TEXT_IN = ", ".join(f's."{PageSection._meta.get_field(f).column}"' for f in TEXT_FIELDS)
_TEXT_OUT = ", ".join(
    f"(extract(epoch from s.{c}) * 1000000)::int8" if c in ("occurred_at", "updated_at") else f"s.{c}"
    for c in (PageSection._meta.get_field(f).column for f in TEXT_FIELDS)
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
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
        """The entity of `kind` with this folded name, else the one with it as an alias."""
        candidates = [self.entities[pk] for pk in self.by_key.get(key, []) if self.entities[pk].kind == kind]
        named = [e for e in candidates if e.key == key]
        if named:
            return named[0]
        return candidates[0] if len(candidates) == 1 else None

    def find(self, text: str) -> list[Entity]:
        if self.pattern is None or not text:
            return []
        found: dict[int, Entity] = {}
        folded = _fold_text(text)
        spans = None  # the segmenter's words, cut only when a Chinese name matched
        for match in self.pattern.finditer(folded):
            if folding.has_cjk(match.group()):
                spans = search.word_spans(folded) if spans is None else spans
                end = spans.get(match.start())
                if end is None:
                    continue  # inside a longer word: 华为 in 新华为人民服务
                if end > match.end() and not folding.is_legal_form(folded[match.end() : end]):
                    continue  # the start of a longer word: 小米 in 小米粥, not in 小米集团
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
    keys = [k for k in by_key if len(k) >= (2 if folding.has_cjk(k) else MIN_LATIN_KEY)]
    latin = [k for k in keys if not folding.has_cjk(k)]
    cjk = [k for k in keys if folding.has_cjk(k)]
    parts = (
        [rf"{folding.LATIN_BEFORE}(?:{folding.alternation(latin)}){folding.LATIN_AFTER}"] if latin else []
    ) + ([f"(?:{folding.alternation(cjk)})"] if cjk else [])
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

    Lexical (case, width, legal suffixes folded); a Chinese name where a word starts (the
    segmenter's: not 华为 in 新华为人民服务), Latin names on word boundaries.
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


@dataclass(slots=True)
class SectionText:
    """What a reader's page text is made of, read as plain values (no model instance)."""

    id: int
    page_id: int
    title: str
    content: str
    container_name: str
    occurred_at: datetime
    updated_at: datetime
    sources: list[dict]  # as `PageSection.sources`
    content_digest: str  # equal for the copies of one thread on several pages


@dataclass(slots=True)
class PageText:
    """A page as one reader sees it: its newest visible sections and the asked-for ones."""

    id: int
    slug: str
    title: str
    kind: str
    newest: list = field(default_factory=list)  # newest first, at most `limit`
    matched: list = field(default_factory=list)  # the asked-for sections, in the order asked


def page_texts_for_reader(
    *, user, page_ids: list[int], limit: int, matched: dict[int, list[int]] | None = None
) -> dict[int, PageText]:
    """Per page id: the page and its `limit` newest sections the user may see (non-stale),
    plus the sections of `matched[page_id]` the user may see.

    One statement for all pages: a LATERAL read per page walks its (page, occurred_at)
    index backwards and stops at `limit`, and the user's keys are sent once; the rows are
    plain values (turning ~150 rows into model instances cost ~2 ms). A person page also
    shows the person's activity elsewhere (`page_sections_for_user`), so it is read with
    its own query. Pages that do not exist are missing from the result.
    """
    matched = matched or {}
    out: dict[int, PageText] = {}
    visible = visible_sections_sql(user, table="s")
    if not page_ids or visible is None:
        return out
    asked = [sid for pid in page_ids for sid in matched.get(pid, [])]
    person = Entity.Kind.PERSON.value
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT pg.id, pg.slug, pg.title, pg.kind, s.newest, {_TEXT_OUT}
                FROM unnest(%s::bigint[]) AS p(id) JOIN {Page._meta.db_table} pg ON pg.id = p.id
                LEFT JOIN LATERAL (
                    (SELECT true AS newest, {_TEXT_IN} FROM {PageSection._meta.db_table} s
                     WHERE s.page_id = pg.id AND pg.kind <> %s AND {visible[0]}
                     ORDER BY s.occurred_at DESC, s.id DESC LIMIT %s)
                    UNION ALL
                    (SELECT false, {_TEXT_IN} FROM {PageSection._meta.db_table} s
                     WHERE s.id = ANY(%s::bigint[]) AND s.page_id = pg.id AND pg.kind <> %s AND {visible[0]})
                ) s ON TRUE""",
            [int_array(page_ids), person, *visible[1], limit, int_array(asked), person, *visible[1]],
        )
        rows = cursor.fetchall()
    found: dict[int, dict[int, SectionText]] = {}
    for pid, slug, title, kind, newest, *values in rows:
        page = out.get(pid)
        if page is None:
            page = out[pid] = PageText(pid, slug, title, kind)
        if newest is None:
            continue  # no section (or a person page, read below)
        sid, page_id, section_title, content, container, occurred_us, updated_us, source_list, digest = values
        if isinstance(source_list, str):
            source_list = json.loads(source_list)
        section = SectionText(
            sid,
            page_id,
            section_title,
            content,
            container,
            _EPOCH + timedelta(microseconds=occurred_us),
            _EPOCH + timedelta(microseconds=updated_us),
            section_sources(source_list),
            digest,
        )
        if newest:
            page.newest.append(section)
        else:
            found.setdefault(pid, {})[section.id] = section
    for pid, page in out.items():
        if page.kind == person:
            _person_page_text(user=user, page=page, limit=limit, asked=matched.get(pid, []))
            continue
        page.newest.sort(key=lambda s: (s.occurred_at, s.id), reverse=True)
        page.matched = [found[pid][sid] for sid in matched.get(pid, []) if sid in found.get(pid, {})]
    return out


def _person_page_text(*, user, page: PageText, limit: int, asked: list[int]) -> None:
    model = Page.objects.select_related("entity__user").get(pk=page.id)
    visible = page_sections_for_user(user=user, page=model).select_related(None).only(*TEXT_FIELDS)
    page.newest = list(visible.order_by("-occurred_at", "-id")[:limit])
    by_id = visible.in_bulk(asked) if asked else {}
    page.matched = [by_id[sid] for sid in asked if sid in by_id]


def visible_updated_at(*, user, page: Page, include_stale: bool = False) -> datetime | None:
    """When the newest section of the page that the user may see changed (None: they see none)."""
    qs = PageSection.objects.visible_to(user, include_stale=include_stale).filter(page=page)
    return qs.aggregate(newest=Max("updated_at"))["newest"]


def stale_section_count(*, user, page_ids: list[int] | None = None) -> int:
    """Sections that would be visible to the user but are stale (awaiting confirmation)."""
    qs = PageSection.objects.visible_to(user, include_stale=True).filter(stale=True)
    if page_ids is not None:
        qs = qs.filter(page_id__in=page_ids)
    return qs.count()


def page_status_for(page: Page, containers) -> str:
    """`page.status` as a reader sees it, given the containers of the page's sections they
    may read: a status set by an issue in a container they cannot read is not theirs to
    know (the page is then just `active` to them)."""
    if page.status != Page.Status.ACTIVE and page.status_container in containers:
        return page.status
    return Page.Status.ACTIVE


def _person_section_count(user) -> RawSQL:
    """For a person page row: how many sections the reader sees on it or authored by the
    person (their handles as `person_handles` makes them: username, e-mail, identities)."""
    from django.contrib.auth import get_user_model

    from connectors.models import ExternalIdentity

    predicate = visible_sections_sql(user, table="ps")
    if predicate is None:
        return RawSQL("0", [], output_field=IntegerField())
    users, entities = get_user_model()._meta.db_table, Entity._meta.db_table
    page, sections = Page._meta.db_table, PageSection._meta.db_table
    person = f"SELECT e.user_id FROM {entities} e WHERE e.id = {page}.entity_id"
    handles = f"""ARRAY(
        SELECT lower(u.username) FROM {users} u WHERE u.id = ({person})
        UNION SELECT lower(u.email) FROM {users} u WHERE u.id = ({person}) AND u.email <> ''
        UNION SELECT lower(x.handle) FROM {ExternalIdentity._meta.db_table} x WHERE x.user_id = ({person}))"""
    return RawSQL(
        f"(SELECT count(*) FROM {sections} ps WHERE {predicate[0]}"
        f" AND (ps.page_id = {page}.id OR ps.authors && {handles}::varchar[]))",
        predicate[1],
        output_field=IntegerField(),
    )


def page_list(*, user, q: str = "", kind: str = "") -> QuerySet[Page]:
    """Pages with at least one visible, non-stale section, with how many the user sees and
    the status as they may see it (`visible_status`, see `page_status_for`)."""
    visible = PageSection.objects.visible_to(user).filter(page_id=OuterRef("pk"))
    tenant = user_tenant(user)
    if tenant is None:
        return Page.objects.none()
    counts = visible.order_by().values("page_id").annotate(c=Count("id")).values("c")
    qs = (
        Page.objects.filter(tenant=tenant)
        .filter(Exists(visible))
        .annotate(
            # A person page also shows what they wrote elsewhere (`page_sections_for_user`).
            visible_sections=Case(
                When(kind=Entity.Kind.PERSON, then=_person_section_count(user)),
                default=Subquery(counts[:1]),
            ),
            # The reader's own "last changed": a private section's edit is not visible through it.
            visible_updated_at=Subquery(visible.order_by("-updated_at").values("updated_at")[:1]),
            visible_status=Case(
                When(
                    Exists(visible.filter(container_key=OuterRef("status_container"))),
                    then=F("status"),
                ),
                default=Value(Page.Status.ACTIVE),
            ),
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
    containers = (
        [page.status_container]
        if page.status != Page.Status.ACTIVE
        and PageSection.objects.visible_to(user)
        .filter(page=page, container_key=page.status_container)
        .exists()
        else []
    )
    page.visible_status = page_status_for(page, containers)
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


@dataclass
class RankedSection:
    """A search hit before any row is read: its id, its page and how it ranked."""

    id: int
    page_id: int
    score: float
    breakdown: dict


def _keyword_lane(visible: QuerySet, *, tenant_id: int, query: str) -> list[tuple]:
    q = keyword.keyword_query(tenant_id=tenant_id, corpus=CORPUS, text=query)
    return keyword.top(visible, q, size=LANE_SIZE, extra=("page_id",))


def _vector_lane(visible: QuerySet, *, query: str) -> list[tuple]:
    """Vector top 50 inside the visible set (HNSW, with an exact top-up when short)."""
    rows = visible.filter(embedding__isnull=False)
    return vectors.nearest(rows, search.embed_query(query), LANE_SIZE, extra=("page_id",))


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
    fused = search.rrf([row[0] for row in kw], [row[0] for row in vec], k=RRF_K)[:top_k]
    kw_rank = {i: (r, s, p) for r, (i, s, p) in enumerate(kw, start=1)}
    vec_rank = {i: (r, d, p) for r, (i, d, p) in enumerate(vec, start=1)}
    ranked = []
    for section_id, score in fused:
        k, v = kw_rank.get(section_id), vec_rank.get(section_id)
        breakdown = {
            # Ranks only, no raw BM25 score: its idf counts the whole tenant, hidden sections
            # too, so the score would tell how common a word is where the reader cannot look.
            "keyword_rank": k[0] if k else None,
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
    """A keyword match, or a vector neighbour that is actually similar (not just the nearest:
    the vector lane always returns its 50, however far)."""
    from almanac.context import conf

    breakdown = breakdown or {}
    if breakdown.get("keyword_rank") is not None:
        return True
    similarity = breakdown.get("vector_similarity")
    return similarity is None or similarity >= conf.MIN_VECTOR_SIMILARITY


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
