"""Writes of page sections: upsert with keyword statistics and embeddings, delete, confirm."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.http import Http404
from django.utils import timezone
from simple_history.utils import get_change_reason_from_object

from almanac.bulk import copy_insert
from almanac.errors import ApplicationError
from almanac.queue import enqueue_once
from almanac.search import keyword
from almanac.search.embeddings import embed
from almanac.services.audit import audit_record
from skills.signals import domain_event
from wiki.constants import CORPUS
from wiki.models import Page, PageSection
from wiki.permissions import confirm_roles
from wiki.services.events import fact_confirmed_payload, pages_updated_announce


@dataclass
class SectionDraft:
    """What a section should be after a rebuild (the compiler's deterministic output)."""

    thread_key: str
    container_key: str
    container_name: str
    title: str
    content: str
    occurred_at: datetime
    acl: list[str]
    authors: list[str]
    event_ids: list[int]
    source_list: list[dict]
    recall_event_ids: list[int] = field(default_factory=list)
    stale_reason: str = ""
    # Texts whose embeddings are averaged into the section's (one per item); default: title+content.
    embed_texts: list[str] = field(default_factory=list)
    # The thread's issue or pull request, if any: its kind, whether it is open, and the event
    # time of its newest version (a manual status older than that gives way).
    work_kind: str = ""
    work_open: bool | None = None
    work_at: datetime | None = None

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.title}\n{self.content}".encode()).hexdigest()


_EMBED_CACHE: dict[str, np.ndarray] = {}
_EMBED_CACHE_MAX = 50_000


def _cache_keys(texts: list[str]) -> list[tuple[str, str]]:
    """(cache key, text as embedded: cut at WIKI_EMBED_MAX_CHARS) of each text."""
    cut = [t[: settings.WIKI_EMBED_MAX_CHARS] for t in texts]
    return [(hashlib.sha1(t.encode()).hexdigest(), t) for t in cut]


def embed_missing(texts: list[str]) -> list[str]:
    """The texts (cut as embedded) whose embeddings are not cached yet, once each."""
    return list({k: t for k, t in _cache_keys(texts) if k not in _EMBED_CACHE}.values())


def embed_cache_put(texts: list[str], vectors) -> None:
    """Cache the embeddings of texts from `embed_missing` (computed elsewhere: ahead of a batch)."""
    if len(_EMBED_CACHE) + len(texts) > _EMBED_CACHE_MAX:
        _EMBED_CACHE.clear()
    for (key, _), vector in zip(_cache_keys(texts), vectors, strict=True):
        _EMBED_CACHE[key] = vector


def embed_mean_prewarm(texts: list[str]) -> list[str]:
    """Embed the texts not in the cache (in batches); returns their cache keys."""
    missing = embed_missing(texts)
    if missing:
        embed_cache_put(missing, embed(missing))
    return [key for key, _ in _cache_keys(texts)]


def embed_mean(texts: list[str]) -> np.ndarray:
    """The section vector: the normalized mean of its items' embeddings.

    Items are embedded once each (cached by text, missing ones in one batch), so a reply
    in a long thread costs one short embedding instead of re-embedding the whole thread;
    for an averaging encoder like USE the mean is close to embedding the concatenation.
    """
    keys = embed_mean_prewarm(texts or ["-"])
    mean = np.mean([_EMBED_CACHE[k] for k in keys], axis=0)
    norm = float(np.linalg.norm(mean)) or 1.0
    return (mean / norm).astype(np.float32)


def _keyword_text(page: Page, draft: SectionDraft) -> str:
    return f"{page.title}\n{draft.title}\n{draft.content}"


def _old_index(section: PageSection) -> dict:
    return {"tokens": section.tokens, "tf": section.tf, "doc_len": section.doc_len}


_UNSET = object()
# Fields a section's text decides: written only when the text changed.
INDEX_FIELDS = ["tokens", "tf", "doc_len", "embedding"]


class SectionWrites:
    """The section writes of a compile, collected and written at `flush`: new sections in one
    multi-row insert and their history rows in another, changed ones in one update per set
    of fields, keyword statistics once (`stats`: a `keyword.StatsBuffer`, else written at
    flush). The keyword index and embedding are computed only for a section whose text
    changed, so replaying an event writes nothing; the embeddings at flush, the texts not
    cached yet in one batch. Each flush announces `page.updated` once per page whose
    sections' text changed or that lost sections (`wiki.services.events`)."""

    def __init__(self, stats=None) -> None:
        self.stats = stats
        self.created: list[PageSection] = []
        self.updated: list[PageSection] = []  # text unchanged
        self.reindexed: list[PageSection] = []  # text changed
        self.deleted: list[PageSection] = []
        self.unembedded: list[tuple[PageSection, list[str]]] = []  # embedded at flush, in one batch

    def write(
        self, *, page: Page, draft: SectionDraft, reason: str, existing: PageSection | None
    ) -> PageSection | None:
        """Make (page, thread, container)'s section match `draft`; the section if it changed."""
        values = _section_values(page=page, draft=draft, existing=existing)
        if existing is not None and all(getattr(existing, k) == v for k, v in values.items()):
            return None
        section = existing or PageSection(
            tenant_id=page.tenant_id,
            page=page,
            thread_key=draft.thread_key,
            container_key=draft.container_key,
        )
        text_changed = existing is None or existing.content_digest != draft.digest
        old = _old_index(section) if existing is not None and text_changed else None
        for name, value in values.items():
            setattr(section, name, value)
        if text_changed:
            new = keyword.index_fields(_keyword_text(page, draft))
            section.tokens, section.tf, section.doc_len = new["tokens"], new["tf"], new["doc_len"]
            self.unembedded.append((section, draft.embed_texts or [f"{draft.title}\n{draft.content}"]))
            (self.stats or keyword).stats_apply(tenant_id=page.tenant_id, corpus=CORPUS, old=old, new=new)
        section._change_reason = reason
        (self.created if existing is None else self.reindexed if text_changed else self.updated).append(
            section
        )
        return section

    def delete(self, *, section: PageSection, reason: str) -> None:
        (self.stats or keyword).stats_apply(
            tenant_id=section.tenant_id, corpus=CORPUS, old=_old_index(section), new=None
        )
        section._change_reason = reason
        self.deleted.append(section)

    def flush(self) -> None:
        now = timezone.now()
        embed_mean_prewarm([text for _, texts in self.unembedded for text in texts])
        for section, texts in self.unembedded:
            section.embedding = embed_mean(texts)
        copy_insert(PageSection, self.created)
        history = _history_rows(self.created, kind="+", date=now)
        for sections, fields in ((self.updated, VALUE_FIELDS), (self.reindexed, VALUE_FIELDS + INDEX_FIELDS)):
            if sections:
                for section in sections:
                    section.updated_at = now
                PageSection.objects.bulk_update(sections, [*fields, "updated_at"], batch_size=FLUSH_ROWS)
                history += _history_rows(sections, kind="~", date=now)
        copy_insert(PageSection.history.model, history)
        removed = [{"section_id": s.pk, "page_id": s.page_id, "acl": list(s.acl)} for s in self.deleted]
        for section in self.deleted:  # rare: one by one, each with its history row
            section.delete()
        pages_updated_announce(
            changed=self.created + self.reindexed, removed=removed, reason_of=get_change_reason_from_object
        )
        self.created, self.updated, self.reindexed, self.deleted, self.unembedded = [], [], [], [], []


def _history_rows(sections: list[PageSection], *, kind: str, date) -> list:
    """The history rows `simple_history` would write for these saves (created "+", changed "~")."""
    history = PageSection.history.model
    return [
        history(
            history_date=date,
            history_user=getattr(s, "_history_user", None) or history.get_default_history_user(s),
            history_change_reason=get_change_reason_from_object(s) or "",
            history_type=kind,
            **{f.attname: getattr(s, f.attname) for f in history.tracked_fields},
        )
        for s in sections
    ]


FLUSH_ROWS = 200
VALUE_FIELDS = [
    "container_name",
    "title",
    "content",
    "content_digest",
    "occurred_at",
    "acl",
    "authors",
    "event_ids",
    "source_list",
    "recall_event_ids",
    "stale",
    "stale_reason",
    "work_kind",
    "work_open",
]


def _section_values(*, page: Page, draft: SectionDraft, existing: PageSection | None) -> dict:
    confirmed = list(existing.confirmed_recall_ids) if existing else []
    if set(draft.recall_event_ids) - set(confirmed):
        # A recall confirmed for the thread on another page holds here too (a later reply
        # that names another customer must not make it stale again).
        confirmed += _thread_confirmations(tenant_id=page.tenant_id, draft=draft)
    stale = bool(set(draft.recall_event_ids) - set(confirmed))
    return {
        "container_name": draft.container_name[:300],
        "title": draft.title[:500],
        "content": draft.content,
        "content_digest": draft.digest,
        "occurred_at": draft.occurred_at,
        "acl": draft.acl,
        "authors": draft.authors,
        "event_ids": draft.event_ids,
        "source_list": draft.source_list,
        "recall_event_ids": draft.recall_event_ids,
        "stale": stale,
        "stale_reason": draft.stale_reason if stale else "",
        "work_kind": draft.work_kind,
        "work_open": draft.work_open,
    }


def section_write(
    *, page: Page, draft: SectionDraft, reason: str, existing=_UNSET, stats=None
) -> tuple[PageSection, bool]:
    """Create or update the section of (page, thread, container) to match `draft`, now.

    `existing` is the current section if the caller already fetched it (None: there is none);
    `stats`, a buffer of keyword statistics written once per batch (default: written now).
    Returns (section, changed). One write of `SectionWrites`."""
    if existing is _UNSET:
        existing = PageSection.objects.filter(
            page=page, thread_key=draft.thread_key, container_key=draft.container_key
        ).first()
    writes = SectionWrites(stats)
    section = writes.write(page=page, draft=draft, reason=reason, existing=existing)
    writes.flush()
    return (section, True) if section is not None else (existing, False)


def section_delete(*, section: PageSection, reason: str, stats=None) -> None:
    """`stats`: a buffer of keyword statistics written once per batch (`keyword.StatsBuffer`);
    default: written now."""
    writes = SectionWrites(stats)
    writes.delete(section=section, reason=reason)
    writes.flush()


def _thread_confirmations(*, tenant_id: int, draft: SectionDraft) -> list[int]:
    rows = PageSection.objects.filter(
        tenant_id=tenant_id, thread_key=draft.thread_key, container_key=draft.container_key
    ).values_list("confirmed_recall_ids", flat=True)
    return sorted({rid for ids in rows for rid in ids})


@transaction.atomic
def section_confirm(
    *, user, page: Page, section_ids: list[int], reason: str = "", as_admin: bool = False
) -> list[PageSection]:
    """Make stale (recalled) sections current again; only sections on `page` the user may see,
    and only by someone with the authority (`wiki.permissions.confirm_roles`: the recalled
    message's sender, an admin, or a steward of the container), with a reason; audited.

    `as_admin` (superusers in the admin) skips the visibility check. The recalls the user
    confirmed are remembered, so a later rebuild of the thread does not make the section
    stale again for the same recall. Sends `fact.confirmed` (`skills.signals.domain_event`)
    with the page, the sections confirmed (their excerpts and readers), the user and the reason.
    """
    ids = sorted(set(section_ids))
    if not ids:
        raise ApplicationError("section_ids may not be empty", status_code=422)
    base = PageSection.objects.all() if as_admin else PageSection.objects.visible_to(user, include_stale=True)
    sections = list(
        base.filter(page=page, id__in=ids)
        .select_related("page")
        .select_for_update(of=("self",))
        .order_by("id")
    )
    if len(sections) != len(ids):
        raise Http404("section not found")
    roles = {s.pk: "admin" for s in sections} if as_admin else confirm_roles(user=user, sections=sections)
    if any(s.stale and s.pk not in roles for s in sections):
        raise ApplicationError(
            "only the sender of the recalled message, an admin or a steward of its container may confirm it",
            status_code=403,
        )
    reason = " ".join((reason or "").split())[:500]
    if any(s.stale for s in sections) and not reason:
        raise ApplicationError("a reason is required to confirm a recalled section", status_code=422)
    # The same thread's copies on other pages (same container, so the same readers) are the
    # same e-mail: confirmed with it.
    copies = Q()
    for section in sections:
        copies |= Q(thread_key=section.thread_key, container_key=section.container_key)
    others = base.filter(copies, tenant_id=page.tenant_id, stale=True).exclude(id__in=ids)
    others = list(others.select_related("page").select_for_update(of=("self",)).order_by("id"))
    roles.update({s.pk: "admin" for s in others} if as_admin else confirm_roles(user=user, sections=others))
    sections += [s for s in others if s.pk in roles]  # a copy needs the same authority
    confirmed = []
    for section in sections:
        if section.stale:
            _confirm(section, user=user, reason=reason, role=roles[section.pk])
            confirmed.append(section.pk)
    if confirmed:
        # Skills subscribed to the event run after the commit (skills.bus).
        done = [s for s in sections if s.pk in confirmed]
        payload = fact_confirmed_payload(page=page, sections=done, user=user, reason=reason)
        domain_event.send(
            sender=PageSection, event="fact.confirmed", payload=payload, tenant_id=page.tenant_id
        )
    if settings.WIKI_SUMMARY_ENABLED and confirmed:
        for page_id in sorted({s.page_id for s in sections}):
            transaction.on_commit(lambda pid=page_id: enqueue_once("wiki.tasks.page_summarize_task", pid))
    return sections


def _confirm(section: PageSection, *, user, reason: str, role: str) -> None:
    """Make one stale section current, remembering its recalls as confirmed; audited with
    the reason and the confirmer's role."""
    section.confirmed_recall_ids = sorted(set(section.confirmed_recall_ids) | set(section.recall_event_ids))
    section.stale = False
    section.stale_reason = ""
    section._change_reason = f"confirmed by {user.username}"
    section._history_user = user
    section.save(update_fields=["confirmed_recall_ids", "stale", "stale_reason", "updated_at"])
    audit_record(
        action="wiki.section_confirmed",
        tenant_id=section.tenant_id,
        actor=user.username,
        object_type="page_section",
        object_id=section.pk,
        detail={
            "page": section.page.slug,
            "recalls": section.recall_event_ids,
            "reason": reason,
            "role": role,
        },
    )
