"""`context_build`: select → fit the budget → prompt, warnings, freshness, next cursor."""

from __future__ import annotations

import hashlib
import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from almanac.errors import ApplicationError
from almanac.search.text import detect_lang
from almanac.search.tokens import count_tokens_by_line
from almanac.selectors import access_snapshot, int_array
from almanac.signals import context_served
from connectors.selectors import source_freshness
from context.budget import fit
from context.cursor import Seen, cursor_decode, cursor_encode
from context.items import Fit, Item
from context.selection import Selection, select
from memories.services.touches import memory_touch_later
from wiki.models import PageSection
from wiki.selectors import stale_section_count
from wiki.services.summary import page_summary_text, task_words

log = logging.getLogger(__name__)


def context_build(**kwargs) -> dict:
    """`context_for`, with one membership lookup serving all of the call's reads."""
    with access_snapshot():
        return context_for(**kwargs)


def context_for(
    *,
    user,
    tenant,
    task: str,
    max_tokens: int,
    session_id=None,
    lang: str | None = None,
    cursor: str | None = None,
    touch: bool = True,
    via: str | None = None,
    agent_key=None,
    explain: bool = False,
) -> dict:
    """The context for one LLM call of an agent acting for `user` (docs/api.md, Context).

    1. Decode the cursor (what earlier passes returned; 400 if foreign or tampered).
    2. Select candidates through the access filters (selection.py).
    3. Fit them under `max_tokens` (budget.py), summarizing pages only when needed.
    4. Report what was summarized or left out, stale sections, lagging sources.
    5. Encode a cursor for the next pass, or None when nothing ranked is left.

    `via` (api, mcp, preview) has the call recorded for the outcome metrics, off the
    request path (`context_served`); without it (benchmarks, scripts) nothing is recorded.
    """
    started = time.perf_counter()
    if tenant is None:
        raise ApplicationError("the user belongs to no tenant: there is nothing to show", status_code=404)
    if not 1 <= max_tokens <= settings.CONTEXT_MAX_TOKENS_LIMIT:
        raise ApplicationError(
            f"max_tokens must be between 1 and {settings.CONTEXT_MAX_TOKENS_LIMIT}", status_code=422
        )
    lang = lang or detect_lang(task)
    seen = cursor_decode(token=cursor, user_id=user.pk, task=task) if cursor else Seen()
    selection = select(user=user, tenant=tenant, task=task, seen=seen, session_id=session_id)
    summarize = page_summarizer(tenant=tenant, lang=lang, keep=selection.entities, task=task)
    result = fit(selection.candidates, max_tokens=max_tokens, lang=lang, summarize=summarize)
    if touch:  # the web UI's preview shows what an agent would get: no agent used it
        touch_returned(result)
    freshness = freshness_for(tenant=tenant)
    warnings = relevance_warnings(selection) if seen.passes == 0 else []
    warnings += budget_warnings(result, lang)
    warnings += freshness_warnings(freshness)
    warnings += stale_warnings(user=user, page_ids=selection.candidate_page_ids)
    out = {
        "prompt": result.prompt,
        # `explain`: each item's `reason` too (the web preview; not part of the API's answer)
        "blocks": blocks_out(result, explain=explain),
        "budget": {"max_tokens": max_tokens, "used": result.used, "blocks": result.block_tokens},
        "warnings": warnings,
        "freshness": freshness,
        "next_cursor": next_cursor(user=user, task=task, seen=seen, result=result, selection=selection),
        "lang": lang,
        "entities": selection.entities,
    }
    if via is not None:
        served_announce(
            user=user,
            tenant=tenant,
            task=task,
            session_id=session_id,
            passes=seen.passes,
            result=result,
            via=via,
            agent_key=agent_key,
            started=started,
        )
    return out


def served_announce(*, user, tenant, task, session_id, passes, result: Fit, via, agent_key, started) -> None:
    """`context_served` for the metrics: what the call returned, its latency so far."""
    memory_ids, section_ids, page_ids = [], [], []
    for items in result.chosen.values():
        for item in items:
            if "memory" in item.refs:
                memory_ids.append(item.refs["memory"])
            elif "page" in item.refs:
                page_ids.append(item.refs["page"])
                section_ids.extend(item.refs.get("sections") or [])
    context_served.send(
        sender=None,
        tenant_id=tenant.pk,
        user_id=user.pk,
        agent_key_id=getattr(agent_key, "pk", None),
        session_id=session_id,
        via=via,
        task=task,
        passes=passes,
        at=timezone.now(),
        latency_ms=(time.perf_counter() - started) * 1000,
        tokens=result.used,
        memory_ids=memory_ids,
        section_ids=section_ids,
        page_ids=page_ids,
    )


def touch_returned(result: Fit) -> None:
    """Count a hit for each memory the call returns, off the request path: recall found more
    candidates than fit, and one the agent never saw was not accessed."""

    ids = [item.refs["memory"] for items in result.chosen.values() for item in items if "memory" in item.refs]
    memory_touch_later(memory_ids=ids)


def _cached(key: str):
    """The cached value, or None: an unreachable shared cache (Redis) only costs a recompute."""
    try:
        return cache.get(key)
    except Exception:  # any backend's connection error
        log.warning("cache read failed; computing instead", exc_info=True)
        return None


def _remember(key: str, value, seconds: int) -> None:
    try:
        cache.set(key, value, seconds)
    except Exception:  # any backend's connection error
        log.warning("cache write failed; not cached", exc_info=True)


def summary_cache_key(item: Item, target: int, lang: str, keep: list[str]) -> str:
    # `item.digest` covers the visible section ids and their updated_at, the text hash the
    # rendering: a reader who sees other sections of the page gets another key, never
    # someone else's summary.
    digest = hashlib.sha256("\x1f".join([item.text, lang, *keep]).encode()).hexdigest()[:32]
    return f"almanac:context:summary:v6:{item.refs.get('page')}:{item.digest}:{digest}:{target}"


def page_summarizer(*, tenant, lang: str, keep: list[str], task: str = ""):
    """summarize(item, target) for the fitter: the wiki's page summary, cached per page
    version and reader. Its fact lines are ranked by the task (those holding its telling
    words first): at a small budget the prompt holds the statements that answer it."""

    keep = sorted(set(keep))[:50]
    words = task_words(task)

    def summarize(item: Item, target: int) -> str | None:
        # Cache-friendly inputs: the target rounded down to a step (the summary still fits),
        # and only the task's entities that occur in the page (others change nothing), so
        # tasks about the same page share one summary.
        target = max(
            target // settings.CONTEXT_SUMMARY_TARGET_STEP * settings.CONTEXT_SUMMARY_TARGET_STEP,
            min(target, settings.CONTEXT_MIN_SUMMARY_TOKENS),
        )
        text = f"{item.title}\n{item.text}".lower()
        present = [word for word in keep if word.lower() in text]
        # Only the task's words the page holds change its summary: tasks that share them share it.
        asked = [word for word in words if word in text]
        key = summary_cache_key(item, target, lang, [*present, "\x1e", *asked])
        summary = _cached(key)
        if summary is not None:
            return summary
        # The wiki's page summary: its fact lines (amounts, dates, owners, states, decisions)
        # newest first with date and author, the newest value of a thing marked current;
        # an LLM's summary only if it keeps them (wiki.services.summary).
        summary = page_summary_text(
            tenant=tenant,
            title=item.title,
            contents=[item.text],
            max_tokens=target,
            keep=present,
            trigger="context",
            log_later=True,
            task=" ".join(asked),
        )
        summary = (summary or "").strip()
        if not summary or count_tokens_by_line(summary) > target:  # by line: from the memos
            return None  # the skill broke its contract: leave the page out rather than cut it
        _remember(key, summary, settings.CONTEXT_SUMMARY_CACHE_SECONDS)
        return summary

    return summarize


def blocks_out(result: Fit, explain: bool = False) -> list[dict]:
    return [
        {
            "kind": kind,
            "tokens": result.block_tokens.get(kind, 0),
            "items": [item_out(item) | ({"reason": item.reason} if explain else {}) for item in items],
        }
        for kind, items in result.chosen.items()
    ]


def item_out(item: Item) -> dict:
    return {
        "id": item.id,
        "title": item.title,
        "text": item.text,
        "score": round(item.score, 6),
        "summarized": item.summarized,
        "updated_at": item.updated_at.isoformat() if item.updated_at else None,
        # wiki pages: when the newest section shown was said, and the status as the reader sees it
        "content_at": _iso(item.occurred_at) if item.kind == "wiki" else None,
        "status": item.status if item.kind == "wiki" else None,
        "sources": [
            {
                "source": s.get("source") or "",
                "url": s.get("url") or "",
                "occurred_at": _iso(s.get("occurred_at")),
                "name": s.get("name") or "",
            }
            for s in item.sources
        ],
    }


def _iso(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def _names(items: list[Item]) -> str:
    return ", ".join(item.label for item in items)


# Block kinds as `budget_exceeded` names them. Warning texts follow the request's language
# (Accept-Language; the web UI's reader), English by default; `code` and `items` never change.
KIND_NAMES = {
    "wiki": gettext_lazy("wiki"),
    "semantic": gettext_lazy("semantic"),
    "episodic": gettext_lazy("episodic"),
    "working": gettext_lazy("working"),
}


def relevance_warnings(selection: Selection) -> list[dict]:
    """`nothing_relevant` when no page and no memory cleared the relevance floor (first pass;
    a later one that finds nothing more ends with no cursor): the prompt then holds only
    the session window, if any, never the nearest strangers."""
    if any(selection.candidates.get(kind) for kind in ("wiki", "semantic", "episodic")):
        return []
    return [
        {
            "code": "nothing_relevant",
            "detail": _("no wiki page or memory is relevant to this task"),
            "items": [],
        }
    ]


def budget_warnings(result: Fit, lang: str) -> list[dict]:
    warnings = []
    if result.summarized:
        warnings.append(
            {
                "code": "summarized",
                "detail": _("summarized to fit the budget: %(names)s") % {"names": _names(result.summarized)},
                "items": [item.id for item in result.summarized],
            }
        )
    parts, ids = [], []
    partial = [item for items in result.chosen.values() for item in items if item.refs.get("omitted")]
    if partial:
        parts.append(
            _("older sections of %(names)s (only the newest %(count)s and those matching the task are used)")
            % {"names": _names(partial), "count": settings.CONTEXT_PAGE_MAX_SECTIONS}
        )
        ids += [f"wiki:{item.id}" for item in partial]
    by_kind: dict[str, list[Item]] = {}
    for item in result.left_out:
        by_kind.setdefault(item.kind, []).append(item)
    for kind, items in by_kind.items():
        listed = ", ".join(i.title if kind == "wiki" else i.id for i in items)
        parts.append(f"{KIND_NAMES.get(kind, kind)}: {listed}")
        ids += [f"{item.kind}:{item.id}" for item in items]
    if parts:
        warnings.append(
            {
                "code": "budget_exceeded",
                "detail": _("left out to stay within max_tokens — %(parts)s") % {"parts": "; ".join(parts)},
                "items": ids,
            }
        )
    return warnings


def freshness_for(*, tenant) -> dict[str, dict]:
    """Each source of the tenant with its sync state (cached for a few seconds)."""

    key = f"almanac:context:freshness:{tenant.pk}"
    freshness = _cached(key) if settings.CONTEXT_FRESHNESS_CACHE_SECONDS > 0 else None
    if freshness is None:
        # Agents get the state and a short reason; the error itself is for operators
        # (`GET /connectors`, the admin): it can name hosts, accounts or internals.
        freshness = {
            name: {k: _iso(v) for k, v in state.items() if k != "last_error"}
            for name, state in source_freshness(tenant=tenant).items()
        }
        if settings.CONTEXT_FRESHNESS_CACHE_SECONDS > 0:
            _remember(key, freshness, settings.CONTEXT_FRESHNESS_CACHE_SECONDS)
    return freshness


def freshness_warnings(freshness: dict[str, dict]) -> list[dict]:
    """`source_lagging` for the sources expected to have delivered and late (`stale`: a poller
    in backoff, failing or behind its schedule), each with its short reason; a quiet webhook,
    push or import source is not late."""
    names, lagging = [], []
    for name, state in sorted(freshness.items()):
        if not state.get("stale"):
            continue
        reason = state.get("reason") or ""
        if state.get("state") in {"backoff", "error"}:
            reason = f"{state['state']}: {reason}" if reason else state["state"]
        lag = state.get("lag_seconds")
        if lag is not None and state.get("state") not in {"backoff", "error"}:
            reason = _("%(reason)s, last synced %(minutes)s min ago") % {
                "reason": reason,
                "minutes": int(lag) // 60,
            }
        lagging.append(_("%(name)s (%(reason)s)") % {"name": name, "reason": reason})
        names.append(name)
    if not lagging:
        return []
    return [
        {
            "code": "source_lagging",
            "detail": _("these sources may be behind, recent changes may be missing: %(sources)s")
            % {"sources": _("; ").join(lagging)},
            "items": names,
        }
    ]


def stale_warnings(*, user, page_ids: list[int]) -> list[dict]:

    if not page_ids:
        return []
    # Usually no candidate page has a stale section at all: one cheap probe on the partial
    # index of stale sections settles that before the ACL-filtered count (its answer is
    # never shown).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {PageSection._meta.db_table} WHERE stale AND page_id = ANY(%s::bigint[]))",
            [int_array(page_ids)],
        )
        if not cursor.fetchone()[0]:
            return []
    count = stale_section_count(user=user, page_ids=page_ids)
    if not count:
        return []
    return [
        {
            "code": "stale_excluded",
            "detail": ngettext(
                "%(count)s stale section (e.g. a recalled e-mail) was excluded until someone confirms it",
                "%(count)s stale sections (e.g. recalled e-mails) were excluded until someone confirms them",
                count,
            )
            % {"count": count},
            "items": [],
        }
    ]


def next_cursor(*, user, task: str, seen: Seen, result: Fit, selection: Selection) -> str | None:
    returned = [item for items in result.chosen.values() for item in items]
    new = Seen(
        pages=set(seen.pages),
        sections=set(seen.sections),
        memories=set(seen.memories),
        whole=set(seen.whole),
        passes=seen.passes + 1,
    )
    for item in returned:
        if item.kind == "wiki":
            new.pages.add(item.refs["page"])
            new.sections.update(item.refs["sections"])
            if not item.summarized:  # its text was all there: its copies elsewhere say nothing new
                new.whole.update(item.refs["sections"])
        elif "memory" in item.refs:
            new.memories.add(item.refs["memory"])
    left_over = [item for item in result.left_out if item.kind != "working"]
    if not (selection.more or left_over):
        return None
    if not returned:
        return None  # nothing fitted at all: another pass with the same budget would loop
    # (Only the working window fitted: the next pass has none, so its budget goes to the rest.)
    return cursor_encode(user_id=user.pk, task=task, seen=new)
