"""The employee web UI: search, wiki pages, own memories, a context preview.

Every view acts as the logged-in user and reads through the same selectors (and so the
same access filter) as the agent API.
"""

from __future__ import annotations

import functools
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from almanac.errors import ApplicationError
from almanac.selectors import user_group_keys, user_tenant
from context.services import context_build
from documents.selectors import document_list
from documents.services.documents import document_upload
from memories.selectors import memory_get_for_user, memory_list, memory_search
from memories.services.memories import memory_delete
from skills.optins import skill_optin_set, skill_optins
from wiki.models import PageSection
from wiki.permissions import confirmable_stale_ids
from wiki.search import page_search
from wiki.selectors import page_get_for_user, page_list, page_sections_rendered
from wiki.services.sections import section_confirm
from wiki.services.summary import page_summary_for_reader

PER_PAGE = 50
RECENT_DOCUMENTS = 10
# Where a document's reading stands, in the reader's language.
DOCUMENT_STATUS = {
    "pending": gettext_lazy("waiting to be read"),
    "read": gettext_lazy("read; looking for clauses"),
    "done": gettext_lazy("done"),
    "failed": gettext_lazy("failed"),
}

# Service errors the web UI can show, in the reader's language (the API keeps the English).
SERVICE_MESSAGES = {
    "only the owner or a governor may delete this memory": gettext_lazy(
        "only the owner or a governor may delete this memory"
    ),
    "the user belongs to no tenant: there is nothing to show": gettext_lazy(
        "the user belongs to no tenant: there is nothing to show"
    ),
}


def service_message(exc: ApplicationError) -> str:
    return str(SERVICE_MESSAGES.get(exc.message, exc.message))


def home(request):
    if not request.user.is_authenticated:
        return render(request, "web/home.html")
    return render(request, "web/search.html", search_results(user=request.user, q=request.GET.get("q", "")))


def login_required_htmx(view):
    """`login_required`, but an htmx request of an expired session is sent to the login page
    as a whole page (HX-Redirect), not swapped into the part of the page that asked."""
    guarded = login_required(view)

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.htmx and not request.user.is_authenticated:
            current = request.htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(f"{settings.LOGIN_URL}?{urlencode({'next': current})}")
        return guarded(request, *args, **kwargs)

    return wrapper


@login_required_htmx
def search(request):
    context = search_results(user=request.user, q=request.GET.get("q", ""))
    # A link opened directly, a reload of a pushed URL and htmx's history restore get the page.
    fragment = request.htmx and not request.htmx.history_restore_request
    response = render(request, "web/_results.html" if fragment else "web/search.html", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


def search_results(*, user, q: str) -> dict:

    q = q.strip()[:500]
    pages = page_search(user=user, query=q, top_k=5) if q else []
    # A person browsing is not an agent recalling: no hit counts (they rank and keep memories).
    memories = memory_search(user=user, query=q, top_k=5) if q else []
    return {"q": q, "pages": pages, "memories": memories}


@login_required
def wiki_list(request):

    kind = request.GET.get("kind", "")
    q = request.GET.get("q", "").strip()[:200]
    pages = page_list(user=request.user, q=q, kind=kind)
    pages = Paginator(pages, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "web/wiki_list.html", {"pages": pages, "kind": kind, "q": q})


@login_required
def wiki_page(request, slug):

    page = page_get_for_user(user=request.user, slug=slug)
    sections = page_sections_rendered(user=request.user, page=page)
    # Only the stale sections this reader may confirm (sender, admin, steward) are offered.
    stale = PageSection.objects.filter(pk__in=confirmable_stale_ids(user=request.user, page=page))
    # Made from the sections this reader sees, as the page API's.
    summary = page_summary_for_reader(user=request.user, page=page)
    return render(
        request,
        "web/wiki_page.html",
        {"page": page, "sections": sections, "stale": stale, "summary": summary},
    )


@login_required
@require_POST
def wiki_confirm(request, slug):

    page = page_get_for_user(user=request.user, slug=slug)
    ids = [int(i) for i in request.POST.getlist("section_ids") if i.isascii() and i.isdigit()]
    if ids:
        try:
            section_confirm(
                user=request.user, page=page, section_ids=ids, reason=request.POST.get("reason", "")[:1000]
            )
        except ApplicationError as exc:  # not theirs to confirm (403), or no reason (422)
            return render(
                request, "web/_error.html", {"message": service_message(exc)}, status=exc.status_code
            )
    return redirect("web-wiki-page", slug=slug)


@login_required
def memory_list_view(request):
    return memories_page(request)


def memories_page(request, *, upload_error: str = "", status: int = 200):
    """The memories page: the reader's memories, their recent documents and the upload form."""
    memory_type = request.GET.get("type", "")
    q = request.GET.get("q", "").strip()[:200]
    memories = memory_list(user=request.user, memory_type=memory_type or None, q=q)
    memories = Paginator(memories, PER_PAGE).get_page(request.GET.get("page"))
    documents = [
        {"document": d, "status": DOCUMENT_STATUS.get(d.status, d.status)}
        for d in document_list(user=request.user)[:RECENT_DOCUMENTS]
    ]
    uploaded = request.GET.get("uploaded", "")
    context = {"memories": memories, "type": memory_type, "q": q, "documents": documents,
               "uploaded": int(uploaded) if uploaded.isdigit() else None,
               "again": request.GET.get("again") == "1", "upload_error": upload_error}  # fmt: skip
    return render(request, "web/memories.html", context, status=status)


@login_required
@require_POST
def document_upload_view(request):
    """The "Add a document" form: the same service as `POST /api/v1/documents`."""
    upload = request.FILES.get("file")
    if upload is None:
        return memories_page(request, upload_error=_("Choose a file to upload."), status=422)
    if upload.size > settings.DOCUMENT_MAX_BYTES:
        message = _("The file is larger than %(limit)s bytes.") % {"limit": settings.DOCUMENT_MAX_BYTES}
        return memories_page(request, upload_error=message, status=413)
    try:
        document, created = document_upload(
            user=request.user, data=upload.read(), filename=upload.name or "",
            scope=request.POST.get("scope", "user"), scope_key=request.POST.get("scope_key", "").strip() or None,
        )  # fmt: skip
    except ApplicationError as exc:
        return memories_page(request, upload_error=service_message(exc), status=exc.status_code)
    query = urlencode({"uploaded": document.pk, **({} if created else {"again": 1})})
    return redirect(f"{reverse('web-memories')}?{query}")


@login_required_htmx
@require_POST
def memory_delete_view(request, memory_id):

    try:
        memory = memory_get_for_user(user=request.user, memory_id=memory_id)
    except Http404:
        if not request.htmx:
            raise
        # Deleted in another tab, or never the reader's to see: said in place of the card.
        message = _("This memory is no longer there.")
        return render(request, "web/_error.html", {"message": message}, status=404)
    try:
        memory_delete(memory=memory, user=request.user, reason="web")
    except ApplicationError as exc:
        return render(request, "web/_error.html", {"message": service_message(exc)}, status=exc.status_code)
    if request.htmx:
        return render(request, "web/_deleted.html")
    return redirect("web-memories")


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
        built = context_build(user=user, tenant=user_tenant(user), task=task, max_tokens=budget, touch=False)
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


# The scheduled skills a reader may opt in to, as the settings page names them.
SCHEDULED_SKILLS = {
    "weekly_report": gettext_lazy(
        "Weekly report: every 7 days, the highlights, decisions, open items and upcoming dates of my"
        " week (from what I may see), kept as a memory only I can read"
    ),
}


@login_required
def settings_view(request):
    """The reader's settings: which scheduled skills run for them (the weekly report)."""
    if request.method == "POST":
        chosen = set(request.POST.getlist("skills"))
        for name in SCHEDULED_SKILLS:
            skill_optin_set(user=request.user, name=name, on=name in chosen)
        return redirect(f"{reverse('web-settings')}?saved=1")
    on = skill_optins(user=request.user)
    skills = [{"name": name, "label": label, "on": name in on} for name, label in SCHEDULED_SKILLS.items()]
    return render(request, "web/settings.html", {"skills": skills, "saved": request.GET.get("saved") == "1"})
