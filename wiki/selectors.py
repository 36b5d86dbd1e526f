"""Permission-aware reads of the wiki. Every path goes through `PageSection.objects.visible_to`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
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

from almanac.models import UserProfile
from almanac.selectors import int_array, user_tenant
from almanac.services.users import user_name
from connectors.models import ExternalIdentity
from wiki import folding, series
from wiki.models import Entity, Page, PageSection, section_sources, visible_sections_sql
from wiki.status import page_statuses_apply, page_work_counts, work_status

# What a page's text, sources and version are made of (page_texts_for_reader).
TEXT_FIELDS = (
    "id",
    "page_id",
    "title",
    "content",
    "container_name",
    "container_key",
    "occurred_at",
    "updated_at",
    "source_list",
    "content_digest",
)
# Those columns inside the LATERAL read, and out of it; times as integer microseconds since the epoch
# (exact, and Django's per-value timestamptz loader cost ~1 ms a call for ~300 values).
_TEXT_IN = ", ".join(f's."{PageSection._meta.get_field(f).column}"' for f in TEXT_FIELDS)
_TEXT_OUT = ", ".join(
    f"(extract(epoch from s.{c}) * 1000000)::int8" if c in ("occurred_at", "updated_at") else f"s.{c}"
    for c in (PageSection._meta.get_field(f).column for f in TEXT_FIELDS)
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def person_handles(user) -> list[str]:
    """The author handles of a user in events: username, e-mail, external identities."""
    handles = {user_name(user).lower()}
    if user.email:
        handles.add(user.email.lower())
    handles |= {
        h.lower() for h in ExternalIdentity.objects.filter(user=user).values_list("handle", flat=True)
    }
    return sorted(handles)


def _person_handles(page: Page) -> list[str]:
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
    visible = PageSection.objects.visible_to(user)
    if handles:
        # A thread the person wrote in is compiled onto every page it names (a meeting about
        # Vercel and Apollo is on both): shown once here, its first copy.
        mine = visible.filter(condition | Q(authors__overlap=handles))
        firsts = mine.order_by("thread_key", "container_key", "id").distinct("thread_key", "container_key")
        visible = PageSection.objects.filter(id__in=firsts.values("id"))
        condition = Q()
    return visible.filter(condition).select_related("page").order_by("occurred_at", "id")


def page_sections_rendered(*, user, page: Page) -> list[PageSection]:
    """The page's sections as a reader is shown them (page API, web page): those of
    `page_sections_for_user`, oldest first, with each recurring meeting as one line and the
    notes of its meetings under it (`wiki.series.series_fold`; the rows are changed in memory only)."""
    sections = list(page_sections_for_user(user=user, page=page))
    folded = series.series_fold(sections, page_title=page.title)
    return sorted(folded, key=lambda s: (s.occurred_at, s.id)) if folded is not sections else sections


@dataclass(slots=True)
class SectionText:
    """What a reader's page text is made of, read as plain values (no model instance)."""

    id: int
    page_id: int
    title: str
    content: str
    container_name: str
    container_key: str
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
    status: str = "active"  # as this reader sees it (`work_status`)
    status_detail: str = ""
    manual: tuple = ("", "", None)  # status_manual, _by, _at


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
            f"""SELECT pg.id, pg.slug, pg.title, pg.kind, pg.status_manual, pg.status_manual_by,
                       pg.status_manual_at, s.newest, {_TEXT_OUT}
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
    for pid, slug, title, kind, manual, manual_by, manual_at, newest, *values in rows:
        page = out.get(pid)
        if page is None:
            page = out[pid] = PageText(pid, slug, title, kind, manual=(manual, manual_by, manual_at))
        if newest is None:
            continue  # no section (or a person page, read below)
        # (id, page, title, content, container, container key) as read; the times and sources decoded.
        *plain, occurred_us, updated_us, source_list, digest = values
        if isinstance(source_list, str):
            source_list = json.loads(source_list)
        section = SectionText(
            *plain,
            _EPOCH + timedelta(microseconds=occurred_us),
            _EPOCH + timedelta(microseconds=updated_us),
            section_sources(source_list),
            digest,
        )
        if newest:
            page.newest.append(section)
        else:
            found.setdefault(pid, {})[section.id] = section
    customers = [pid for pid, page in out.items() if page.kind == Entity.Kind.CUSTOMER.value]
    counts = page_work_counts(user=user, page_ids=list(out), customers=customers, open_items=False)
    for pid, page in out.items():
        page.status, page.status_detail = work_status(
            counts=counts.get(pid, {}),
            manual=page.manual[0],
            manual_by=page.manual[1],
            manual_at=page.manual[2],
        )
        if page.kind == person:
            _person_page_text(user=user, page=page, limit=limit, asked=matched.get(pid, []))
            continue
        page.newest.sort(key=lambda s: (s.occurred_at, s.id), reverse=True)
        page.matched = [found[pid][sid] for sid in matched.get(pid, []) if sid in found.get(pid, {})]
        _fold_series(page)
    return out


def _fold_series(page: PageText) -> None:
    """A recurring meeting as one line, the notes of its meetings under it (`wiki.series`),
    in the newest and the asked-for sections alike; newest first again after."""
    newest_ids = {s.id for s in page.newest}
    shown = page.newest + [s for s in page.matched if s.id not in newest_ids]
    kept = {s.id for s in series.series_fold(shown, page_title=page.title)}
    page.newest = sorted(
        (s for s in page.newest if s.id in kept), key=lambda s: (s.occurred_at, s.id), reverse=True
    )
    page.matched = [s for s in page.matched if s.id in kept]


def _person_page_text(*, user, page: PageText, limit: int, asked: list[int]) -> None:
    model = Page.objects.select_related("entity__user").get(pk=page.id)
    visible = page_sections_for_user(user=user, page=model).select_related(None).only(*TEXT_FIELDS)
    page.newest = list(visible.order_by("-occurred_at", "-id")[:limit])
    by_id = visible.in_bulk(asked) if asked else {}
    page.matched = [by_id[sid] for sid in asked if sid in by_id]
    _fold_series(page)


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


def page_content_times(*, user, page_ids) -> dict[int, datetime]:
    """Per page: when its newest section the user may see was said (the content time)."""
    rows = (
        PageSection.objects.visible_to(user)
        .filter(page_id__in=list(page_ids))
        .order_by()
        .values("page_id")
        .annotate(newest=Max("occurred_at"))
        .values_list("page_id", "newest")
    )
    return dict(rows)


def _person_section_count(user) -> RawSQL:
    """For a person page row: how many sections the reader sees on it or authored by the
    person (their handles as `person_handles` makes them: username, e-mail, identities)."""
    predicate = visible_sections_sql(user, table="ps")
    if predicate is None:
        return RawSQL("0", [], output_field=IntegerField())
    users, entities = get_user_model()._meta.db_table, Entity._meta.db_table
    page, sections = Page._meta.db_table, PageSection._meta.db_table
    person = f"SELECT e.user_id FROM {entities} e WHERE e.id = {page}.entity_id"
    handles = f"""ARRAY(
        SELECT lower(p.username) FROM {UserProfile._meta.db_table} p WHERE p.user_id = ({person})
        UNION SELECT lower(u.email) FROM {users} u WHERE u.id = ({person}) AND u.email <> ''
        UNION SELECT lower(x.handle) FROM {ExternalIdentity._meta.db_table} x WHERE x.user_id = ({person}))"""
    return RawSQL(
        f"(SELECT count(DISTINCT (ps.thread_key, ps.container_key)) FROM {sections} ps WHERE {predicate[0]}"
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
            # When its newest visible section was said (not compiled).
            visible_content_at=Subquery(visible.order_by("-occurred_at").values("occurred_at")[:1]),
            # As `work_status` says it, from the sections the reader may see (the API adds
            # the counts with `page_statuses_apply`).
            visible_status=Case(
                When(~Q(status_manual=""), then=F("status_manual")),
                When(kind=Entity.Kind.CUSTOMER, then=Value(Page.Status.ACTIVE)),  # its issues never open it
                When(Exists(visible.exclude(work_kind="").filter(work_open=True)), then=Value("open")),
                When(Exists(visible.exclude(work_kind="")), then=Value("closed")),
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
    page_statuses_apply(user=user, pages=[page])
    return page


WEEK_PAGES_LIMIT = 50  # pages one period's report reads, most recently changed first
WEEK_SECTIONS_PER_PAGE = 10
WEEK_SECTION_CHARS = 1500


def pages_of_period(*, user, since: datetime, until: datetime) -> list[dict]:
    """The pages with a section `user` may see that changed or was said in [since, until),
    most recently changed first, each with those sections (`mine`: the user wrote in it), as
    a reading skill gets them (`skills.signals.rows_for_skill`, source "pages")."""
    handles = set(person_handles(user))
    sections = (
        PageSection.objects.visible_to(user)
        .filter(
            Q(updated_at__gte=since, updated_at__lt=until) | Q(occurred_at__gte=since, occurred_at__lt=until)
        )
        .select_related("page")
        .only(
            "page__slug",
            "page__title",
            "title",
            "content",
            "occurred_at",
            "updated_at",
            "work_open",
            "authors",
        )
        .order_by("-updated_at", "-id")
    )
    pages: dict[int, dict] = {}
    for section in sections.iterator(chunk_size=500):
        page = pages.get(section.page_id)
        if page is None:
            if len(pages) >= WEEK_PAGES_LIMIT:
                continue
            page = pages[section.page_id] = {
                "slug": section.page.slug,
                "title": section.page.title,
                "sections": [],
            }
        if len(page["sections"]) < WEEK_SECTIONS_PER_PAGE:
            page["sections"].append(
                {
                    "title": section.title[:500],
                    "text": section.content[:WEEK_SECTION_CHARS],
                    "occurred_at": section.occurred_at.isoformat(),
                    "open": section.work_open,
                    "mine": bool(handles & {a.lower() for a in section.authors}),
                }
            )
    return list(pages.values())
