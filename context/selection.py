"""Selection: which wiki pages, memories and session turns are candidates for a task.

Reads only through the other apps' permission-aware selectors (and the one access
filter `PageSection.objects.visible_to`), so the context call can never see more than
the user may read.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from django.conf import settings

from almanac.search import lanes
from context.cursor import Seen
from context.items import Item
from context.labels import day, single_line
from memories.selectors import memory_search, session_window
from wiki.matching import entity_matcher
from wiki.models import Page, PageSection
from wiki.search import described_pages, lookalike, named_pages, rank_pages, relevant, section_ranking
from wiki.selectors import page_texts_for_reader

# Ids such as PRD-2024-013, INV_2025/07, #4521 are worth reporting as entities.
_ID = re.compile(r"\b[A-Za-z]+[-_/][A-Za-z0-9]*\d[A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)*\b|#\d+")


@dataclass
class Selection:
    candidates: dict[str, list[Item]] = field(default_factory=dict)
    entities: list[str] = field(default_factory=list)
    candidate_page_ids: list[int] = field(default_factory=list)
    more: bool = False  # something ranked below what this pass considered


def task_entities(*, user, tenant, task: str) -> tuple[list, dict[int, int], list[str]]:
    """Wiki entities named in the task whose page the user may see (`named_pages`), their
    page ids ({entity id: page id}), and the names to report: theirs plus ids like
    PRD-2024-013 written in the task."""
    entities, pages = named_pages(user=user, tenant_id=tenant.pk, text=task)
    names = list(dict.fromkeys([e.name for e in entities] + [m.group() for m in _ID.finditer(task)]))
    return entities, pages, names


def _where(section) -> str:
    source = section.sources[0]["source"] if section.sources else ""
    return " ".join(single_line(p) for p in [source, section.container_name] if p)


def _page_parts(sections) -> list[tuple[str | None, str]]:
    """(text key, rendering) of each section: tagged with its container unless they all
    share one (named in the page's header). The compiler already starts each line with its
    date and author."""
    tagged = len({_where(s) for s in sections}) > 1
    return [
        (digest_key(s), f"[{_where(s)}] {s.content.strip()}" if tagged else s.content.strip())
        for s in sections
    ]


def _page_sources(sections) -> list[dict]:
    sources: list[dict] = []
    for section in sections:
        for source in section.sources:
            sources.append({**source, "name": section.container_name})
    sources.sort(key=lambda s: str(s.get("occurred_at") or ""), reverse=True)
    return sources


def page_items(
    *,
    user,
    ranked: list[tuple[int, float]],
    matched: dict[int, list[int]] | None = None,
    taken: set[int] | None = None,
    said: set[str] | None = None,
    apart: Apart | None = None,
) -> list[Item]:
    """The pages' visible, non-stale sections as Items, newest first (pages with none are skipped).

    A page contributes its newest PAGE_MAX_SECTIONS sections plus the ones that matched the
    task (`matched`: section ids per page, best first); `refs["omitted"]` says older
    sections were left out. Newest-first (not by score) keeps the text stable across
    tasks, so the summary cache is shared.

    `taken`: section ids already returned (earlier passes, higher-ranked pages of this
    call; a person page shows sections of other pages too): left out, and the ones used
    here are added to it. `said`: texts (`digest_key`) an earlier pass returned whole: the
    compiler writes one thread's section on every page it names, and those copies are left
    out too. (Within one call a thread may show on each page it names: which copy the
    fitter keeps whole is only known after these are read.) A page left with none is skipped.
    """
    taken = set() if taken is None else taken
    said = set() if said is None else said

    matched = {pid: ids[: settings.CONTEXT_PAGE_MATCHED_SECTIONS] for pid, ids in (matched or {}).items()}
    pages = page_texts_for_reader(
        user=user,
        page_ids=[pid for pid, _ in ranked],
        limit=settings.CONTEXT_PAGE_MAX_SECTIONS + 1,
        matched=matched,
    )
    items = []
    for pid, score in ranked:
        if pid in pages:
            for item in _page_with_sections(pages[pid], score, taken, said, apart):
                taken.update(item.refs["sections"])
                items.append(item)
    return items


def digest_key(section) -> str | None:
    """What identifies a section's text across pages (None for rows written before digests)."""
    return section.content_digest[:16] or None


def section_digests(section_ids: set[int]) -> set[str]:
    """The text keys (`digest_key`) of these sections (one query; none for none)."""
    if not section_ids:
        return set()

    rows = PageSection.objects.filter(id__in=sorted(section_ids)).values_list("content_digest", flat=True)
    return {digest[:16] for digest in rows if digest}


def _page_with_sections(page, score: float, taken: set[int], said: set[str], apart=None) -> list[Item]:
    omitted = len(page.newest) > settings.CONTEXT_PAGE_MAX_SECTIONS
    seen_here = set(said)

    def fresh(section) -> bool:
        key = digest_key(section)
        if section.id in taken or key in seen_here:
            return False
        if apart is not None and apart.other(section.content, page.id):
            return False
        if key:
            seen_here.add(key)  # a person page may show two copies of one thread
        return True

    group = {}
    for section in page.newest:
        if len(group) == settings.CONTEXT_PAGE_MAX_SECTIONS:
            break
        if fresh(section):
            group[section.id] = section
    for section in page.matched:
        if section.id not in group and fresh(section):
            group[section.id] = section
    if not group:
        return []  # nothing the user may see: the page does not exist for them
    ordered = sorted(group.values(), key=lambda s: (s.occurred_at, s.id), reverse=True)
    return [_page_item(page, ordered, score, omitted)]


def _status_text(page) -> str:
    """ "open — 2 open issues, 1 open PR": a page's status as its reader sees it ("" when it
    has no status worth saying: no open or closed work, no mark)."""
    status, detail = getattr(page, "status", ""), getattr(page, "status_detail", "")
    if not detail:
        return ""
    return f"{status} — {detail}"


def _page_item(page, group, score: float, omitted: bool = False) -> Item:
    parts = _page_parts(group)
    digest = hashlib.sha256(
        "|".join(f"{s.id}:{s.updated_at.isoformat()}" for s in group).encode()
    ).hexdigest()
    return Item(
        kind="wiki",
        id=page.slug,
        title=page.title,
        text="\n".join(text for _, text in parts),
        parts=parts,
        score=score,
        updated_at=max(s.updated_at for s in group),
        # the content time: when its newest section shown was said (not when it was compiled)
        occurred_at=max(s.occurred_at for s in group),
        status=_status_text(page),
        sources=_page_sources(group),
        digest=digest[:32],
        refs={"page": page.id, "sections": [s.id for s in group], "omitted": omitted},
    )


@dataclass
class Apart:
    """Look-alikes kept apart: entities whose name shares most of its start with an entity
    the task names or describes (`wiki.search.lookalike`), and that the task does not name
    itself. Their pages, and sections that name one of them but no task entity, are left out.
    On a page that is not a task entity's own (a product's, a person's), a section about
    another entity of a task entity's kind (another customer) and none of the task's is left
    out too: "our quote to Norwick" is not answered by the Vega page's quotes to others."""

    matcher: object
    task: set[int]
    others: set[int]
    strangers: set[int] = field(default_factory=set)
    own_pages: dict[int, str] = field(default_factory=dict)  # {page id: its task entity's kind}

    @classmethod
    def of(
        cls, tenant_id: int, entities: list, pages: dict[int, int] | None = None, *, named: bool = True
    ) -> Apart | None:
        """`pages`: {entity id: page id} of the task's entities. `named` False: the task
        describes them (`described_pages`), which may be a wrong guess: only their
        look-alikes are kept apart, not every other entity of their kind (a task about "the
        robotics customer in Denver" read as the wrong robotics customer keeps the right one)."""
        if not entities:
            return None
        matcher = entity_matcher(tenant_id)
        task = {e.pk for e in entities}
        others = {
            pk
            for pk, other in matcher.entities.items()
            if pk not in task
            and any(other.kind == e.kind and lookalike(other.name, e.name) for e in entities)
        }
        kinds = {e.kind for e in entities} - {
            "person"
        }  # a task naming a person is about what others said too
        strangers = (
            {pk for pk, other in matcher.entities.items() if pk not in task and other.kind in kinds} - others
            if named
            else set()
        )
        own = {(pages or {})[e.pk]: e.kind for e in entities if e.pk in (pages or {})}
        return cls(matcher, task, others, strangers, own) if others or strangers else None

    def other(self, text: str, page_id: int | None = None) -> bool:
        """Does the text name a look-alike and no entity of the task, or another entity of a
        task entity's kind and none of the task's of that kind (except on the own page of a
        task entity of that kind: a customer's page keeps what it holds)?"""
        named = self.matcher.find(text)
        ids = {e.pk for e in named}
        if ids & self.others and not ids & self.task:
            return True
        asked = {e.kind for e in named if e.pk in self.task}
        own = self.own_pages.get(page_id)
        return any(e.pk in self.strangers and e.kind not in asked and e.kind != own for e in named)

    def pages(self, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """The ranked pages without the look-alikes' and the other same-kind entities' own
        pages (a thread naming a task entity too is on that entity's page as well)."""
        theirs = set(
            Page.objects.filter(
                id__in=[pid for pid, _ in ranked], entity__in=self.others | self.strangers
            ).values_list("id", flat=True)
        )
        return [(pid, score) for pid, score in ranked if pid not in theirs]


def task_pages(*, user, tenant, task: str, hits) -> tuple[list, list[int], list[str], bool]:
    """(the entities the task is about, their page ids to rank first, names to report,
    whether it names them): the named entities, else those it describes
    (`described_pages`: several close ones are all candidates, each named by its page)."""
    entities, pages, names = task_entities(user=user, tenant=tenant, task=task)
    if not entities:
        # Not reported as the task's entities (it named none; their pages carry their
        # names). A task matching many customers' pages ("renewals") describes none of them
        # (`described_pages` returns none), and then nothing is kept apart.
        described, pages = described_pages(user=user, tenant_id=tenant.pk, ranked=hits, task=task)
        return described, [pages[e.pk] for e in described], names, False
    return entities, [pages[e.pk] for e in entities], names, True


def select_pages(*, user, tenant, task: str, seen: Seen, selection: Selection) -> None:

    hits = section_ranking(
        user=user, query=task, top_k=settings.CONTEXT_SECTION_TOP_K, exclude_section_ids=seen.sections
    )
    about, entity_page_ids, selection.entities, named = task_pages(
        user=user, tenant=tenant, task=task, hits=hits
    )
    ranked = rank_pages(hits, entity_page_ids, seen.pages)
    # Kept apart from the entities the task names or describes (each one's page id is at its
    # index: `task_pages`).
    pages = dict(zip([e.pk for e in about], entity_page_ids, strict=False))
    apart = Apart.of(tenant.pk, about, pages, named=named)
    if apart is not None:
        ranked = apart.pages(ranked)
    selection.candidate_page_ids = [pid for pid, _ in ranked]
    top = settings.CONTEXT_TOP_PAGES
    # The hits of each page, best first: a page is read with the sections the task matched.
    matched: dict[int, list[int]] = {}
    for hit in hits:
        matched.setdefault(hit.page_id, []).append(hit.id)
    # Read the top pages; a named page may have nothing visible to this user, then read on.
    items: list[Item] = []
    taken = set(seen.sections)  # a section is returned once, on the best-ranked page showing it
    said = section_digests(seen.whole)  # and a text an earlier pass returned whole, whichever copy
    start = 0
    while len(items) < top and start < len(ranked):
        batch = ranked[start : start + top - len(items)]
        items += page_items(user=user, ranked=batch, matched=matched, taken=taken, said=said, apart=apart)
        start += len(batch)
    why = page_reasons(hits)
    for item in items:  # a page ranked first for an entity its hits describe has no hit of its own
        item.reason = "entity" if item.title in selection.entities else why.get(item.refs["page"], "entity")
        item.about_task = item.refs["page"] in entity_page_ids
    selection.candidates["wiki"] = items
    selection.more = selection.more or start < len(ranked)


def page_reasons(hits) -> dict[int, str]:
    """Why a page is a candidate, when the task does not name it: how its best relevant hit
    was found, "keyword" (enough of the task's words) or "similarity"."""
    reasons: dict[int, str] = {}
    for hit in hits:  # best first
        if hit.page_id not in reasons and relevant(hit.breakdown):
            coverage = hit.breakdown.get("keyword_coverage")
            found_by_words = coverage is not None and coverage >= settings.WIKI_MIN_KEYWORD_COVERAGE
            reasons[hit.page_id] = "keyword" if found_by_words else "similarity"
    return reasons


def memory_reason(breakdown: dict) -> str:
    """How a memory was found: "keyword" (an exact id, or enough of the task's words) or
    "similarity"."""
    coverage = breakdown.get("keyword_coverage") or 0.0
    found_by_words = breakdown.get("exact_id") or coverage >= settings.MEMORY_MIN_KEYWORD_COVERAGE
    return "keyword" if found_by_words else "similarity"


def _memory_item(hit, kind: str) -> Item:
    memory = hit.memory
    return Item(
        kind=kind,
        id=str(memory.id),
        title=single_line(memory.content)[:80],
        text=memory.content,
        score=float(hit.score),
        updated_at=memory.updated_at,
        occurred_at=memory.occurred_at,
        sources=_memory_sources(memory),
        refs={"memory": memory.id},
        reason=memory_reason(hit.breakdown),
    )


def _memory_sources(memory) -> list[dict]:
    meta = memory.meta or {}
    source = meta.get("source") or ("session" if meta.get("session_id") else "memory")
    return [
        {
            "source": str(source),
            "url": str(meta.get("url") or ""),
            "occurred_at": day(memory.occurred_at) or None,
        }
    ]


def select_memories(*, user, task: str, seen: Seen, selection: Selection) -> None:
    """Semantic and episodic memories, best first, from one recall over both types.

    One call halves the recall cost (its keyword lane is the most expensive query of a
    context call); a type that came back short while the other filled the list gets a
    recall of its own, so neither type is crowded out.
    """

    want = {"semantic": settings.CONTEXT_SEMANTIC_TOP_K, "episodic": settings.CONTEXT_EPISODIC_TOP_K}
    # Twice what both need: the lanes fetch 50 each anyway, and a deep enough list rarely
    # leaves one type short (which costs a recall of its own).
    asked = 2 * sum(want.values())
    # Not touched here: the context call touches the memories it returns (services.py).
    hits = memory_search(
        user=user, query=task, top_k=asked, memory_types=list(want), exclude_ids=seen.memories
    )
    by_kind = {kind: [h for h in hits if h.memory.memory_type == kind] for kind in want}
    for kind, top_k in want.items():
        if len(hits) >= asked and len(by_kind[kind]) < top_k:
            by_kind[kind] = memory_search(
                user=user,
                query=task,
                top_k=top_k + 1,
                memory_types=[kind],
                exclude_ids=seen.memories,
            )
        if len(by_kind[kind]) > top_k or len(hits) >= asked:
            selection.more = True
        selection.candidates[kind] = [_memory_item(hit, kind) for hit in by_kind[kind][:top_k]]


def select_working(*, user, session_id) -> list[Item]:

    window = session_window(user=user, session_id=session_id)
    return [
        Item(
            kind="working",
            id=f"{window['session_id']}:{index}",
            title=turn["role"] if turn.get("kind") != "summary" else "summary",
            text=turn["content"],
            role="summary" if turn.get("kind") == "summary" else turn["role"],
        )
        for index, turn in enumerate(window["turns"])
    ]


def select(*, user, tenant, task: str, seen: Seen, session_id=None) -> Selection:
    """Candidates for every block, best first; the budget fitter decides what fits."""
    selection = Selection()
    if session_id is not None:
        working = select_working(user=user, session_id=session_id)  # 404 if not the user's
        # The working window is the live conversation: part of the first pass only.
        if seen.passes == 0:
            selection.candidates["working"] = working
    # Wiki and memories are independent reads: side by side on two connections (almanac.search.lanes).
    # Each fills its own Selection: no field is written from two threads.
    recalled = Selection()
    memories = lanes.fork(lambda: select_memories(user=user, task=task, seen=seen, selection=recalled))
    select_pages(user=user, tenant=tenant, task=task, seen=seen, selection=selection)
    memories.result()
    selection.candidates.update(recalled.candidates)
    selection.more = selection.more or recalled.more
    return selection
