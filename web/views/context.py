"""The context preview: what `POST /api/v1/context` would return for the reader, each item
with why it was chosen, its sources and tokens, and what was left out and why."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from almanac.errors import ApplicationError
from almanac.labels import group_labels, labels_ordered
from almanac.search.tokens import count_tokens
from almanac.selectors import user_group_keys, user_tenant
from context.services import context_build
from web.views.common import service_message
from web.views.memories import ORIGINS
from wiki.selectors import page_list


@login_required
def context_preview(request):
    """What `POST /api/v1/context` would return for this user. The form posts: a long task
    (up to TASK_MAX_CHARS, percent-encoded) does not fit in a request line; GET links work too."""
    data = request.POST if request.method == "POST" else request.GET
    task = data.get("task", "").strip()
    result, error = context_preview_build(user=request.user, task=task, max_tokens=data.get("max_tokens"))
    context = {
        "task": task,
        "max_tokens": data.get("max_tokens") or settings.CONTEXT_DEFAULT_MAX_TOKENS,
        "max_tokens_limit": settings.CONTEXT_MAX_TOKENS_LIMIT,
        "result": result,
        "sources": freshness_rows(result["freshness"]) if result else [],
        "blocks": preview_blocks(result) if result else [],
        "left_out": left_out_rows(result, user=request.user) if result else [],
        "notices": [w for w in result["warnings"] if w["code"] not in LEFT_OUT] if result else [],
        "error": error,
        "groups": access_words(request.user),
    }
    return render(request, "web/context.html", context)


def context_preview_build(*, user, task: str, max_tokens: str | None) -> tuple[dict | None, str]:
    """The context for `task`, or an error message in the reader's language."""

    if not task:
        return None, ""
    budget, error = context_max_tokens(max_tokens)
    error = error or context_task_error(task)
    if error:
        return None, error
    try:
        built = context_build(
            user=user,
            tenant=user_tenant(user),
            task=task,
            max_tokens=budget,
            touch=False,
            via="preview",
            explain=True,
        )
        return built, ""
    except ApplicationError as exc:
        return None, service_message(exc)
    except Http404:
        return None, _("not found")


# Warnings about what the context holds less of than it could: shown as "left out and why".
LEFT_OUT = {"budget_exceeded", "summarized", "stale_excluded", "nothing_relevant"}


def left_out_rows(result: dict, *, user) -> list[dict]:
    """The "left out" warnings as the preview says them. `budget_exceeded` is said by the
    template from its code, with what it names in plain words (`budget_names`): the
    service's own text is written for agents (it names `max_tokens`, memory kinds, ids)."""
    return [
        {**w, "names": budget_names(result, items=w["items"], user=user)}
        if w["code"] == "budget_exceeded"
        else w
        for w in result["warnings"]
        if w["code"] in LEFT_OUT
    ]


def budget_names(result: dict, *, items: list[str], user) -> list[str]:
    """What a `budget_exceeded` warning left out (its `items`, "<kind>:<id>"), in the
    reader's words: a chosen page's older sections, each page left out by its title (read
    through the reader's page filter), and how many memories."""
    chosen = {
        item["id"]: item["title"]
        for block in result["blocks"]
        if block["kind"] == "wiki"
        for item in block["items"]
    }
    slugs = [key.partition(":")[2] for key in items if key.startswith("wiki:")]
    titles = dict(
        page_list(user=user)
        .filter(slug__in=[s for s in slugs if s not in chosen])
        .values_list("slug", "title")
    )
    names = [
        _("older sections of %(title)s") % {"title": chosen[slug]} if slug in chosen else titles[slug]
        for slug in slugs
        if slug in chosen or slug in titles
    ]
    memories = sum(1 for key in items if not key.startswith("wiki:"))
    if memories:
        names.append(ngettext("%(count)s memory", "%(count)s memories", memories) % {"count": memories})
    return names


def access_words(user) -> list[str]:
    """The reader's access groups in plain words ("you", "Sales department", "members of
    #sales"), widest first."""
    keys = user_group_keys(user)
    return labels_ordered(group_labels(user=user, keys=keys), keys)


def preview_blocks(result: dict) -> list[dict]:
    """The blocks as the preview lists them: each item with its tokens (as the budget
    counts text) and, for a wiki page, the slug its link opens; a memory's source in the
    words of its card ("a conversation (session)", "an import")."""
    return [
        {
            "kind": block["kind"],
            "tokens": block["tokens"],
            "items": [
                {
                    **item,
                    "tokens": count_tokens(item["text"]),
                    "slug": item["id"] if block["kind"] == "wiki" else "",
                    "sources": item["sources"]
                    if block["kind"] == "wiki"
                    else memory_sources(item["sources"]),
                }
                for item in block["items"]
            ],
        }
        for block in result["blocks"]
        if block["items"]
    ]


def memory_sources(sources: list[dict]) -> list[dict]:
    return [{**src, "source": str(ORIGINS.get(src["source"], ORIGINS["other"]))} for src in sources]


def context_max_tokens(raw: str | None) -> tuple[int, str]:
    """The budget asked for, or an error in the reader's language (the API's limits)."""
    limit = settings.CONTEXT_MAX_TOKENS_LIMIT
    try:
        value = int(raw) if raw else settings.CONTEXT_DEFAULT_MAX_TOKENS
    except ValueError:
        value = 0
    if not 1 <= value <= limit:
        return 0, _("The token budget must be a whole number between 1 and %(limit)s.") % {"limit": limit}
    return value, ""


def context_task_error(task: str) -> str:
    if "\x00" in task:
        return _("The task must not contain NUL characters.")
    if len(task) > settings.CONTEXT_TASK_MAX_CHARS:
        return _("The task is %(length)s characters long; the limit is %(limit)s.") % {
            "length": len(task),
            "limit": settings.CONTEXT_TASK_MAX_CHARS,
        }
    return ""


def freshness_rows(freshness: dict[str, dict]) -> list[dict]:
    """Sources with their state and last sync as a datetime (the service returns ISO text)."""
    return [
        {
            "name": name,
            "state": state.get("state"),
            "last_synced_at": parse_datetime(state.get("last_synced_at") or ""),
        }
        for name, state in sorted(freshness.items())
    ]
