"""The context preview: what `POST /api/v1/context` would return for the reader."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from almanac.errors import ApplicationError
from almanac.selectors import user_group_keys, user_tenant
from context.services import context_build
from web.views.common import service_message


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
        "error": error,
        "groups": user_group_keys(request.user),
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
            user=user, tenant=user_tenant(user), task=task, max_tokens=budget, touch=False, via="preview"
        )
        return built, ""
    except ApplicationError as exc:
        return None, service_message(exc)
    except Http404:
        return None, _("not found")


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
