"""The employee web UI: search, wiki pages, own memories, a context preview.

Every view acts as the logged-in user and reads through the same selectors (and so the
same access filter) as the agent API.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from almanac.errors import ApplicationError
from almanac.selectors import user_group_keys, user_tenant


def home(request):
    if not request.user.is_authenticated:
        return render(request, "home.html")
    return render(request, "web/search.html", {"q": request.GET.get("q", "")})


@login_required
def search(request):
    from memories.selectors import memory_search
    from wiki.selectors import page_search

    q = request.GET.get("q", "").strip()[:500]
    pages = page_search(user=request.user, query=q, top_k=5) if q else []
    memories = memory_search(user=request.user, query=q, top_k=5) if q else []
    return render(request, "web/_results.html", {"q": q, "pages": pages, "memories": memories})


@login_required
def wiki_list(request):
    from wiki.selectors import page_list

    kind = request.GET.get("kind", "")
    q = request.GET.get("q", "").strip()[:200]
    pages = page_list(user=request.user, q=q, kind=kind)[:200]
    return render(request, "web/wiki_list.html", {"pages": pages, "kind": kind, "q": q})


@login_required
def wiki_page(request, slug):
    from wiki.models import PageSection
    from wiki.selectors import page_get_for_user, page_sections_for_user

    page = page_get_for_user(user=request.user, slug=slug)
    sections = page_sections_for_user(user=request.user, page=page)
    stale = PageSection.objects.visible_to(request.user, include_stale=True).filter(page=page, stale=True)
    return render(request, "web/wiki_page.html", {"page": page, "sections": sections, "stale": stale})


@login_required
@require_POST
def wiki_confirm(request, slug):
    from wiki.selectors import page_get_for_user
    from wiki.services.sections import section_confirm

    page = page_get_for_user(user=request.user, slug=slug)
    ids = [int(i) for i in request.POST.getlist("section_ids") if i.isascii() and i.isdigit()]
    if ids:
        section_confirm(user=request.user, page=page, section_ids=ids)
    return redirect("web-wiki-page", slug=slug)


@login_required
def memory_list_view(request):
    from memories.selectors import memory_list

    memory_type = request.GET.get("type", "")
    q = request.GET.get("q", "").strip()[:200]
    memories = memory_list(user=request.user, memory_type=memory_type or None, q=q)[:200]
    return render(request, "web/memories.html", {"memories": memories, "type": memory_type, "q": q})


@login_required
@require_POST
def memory_delete_view(request, memory_id):
    from memories.selectors import memory_get_for_user
    from memories.services.memories import memory_delete

    memory = memory_get_for_user(user=request.user, memory_id=memory_id)
    try:
        memory_delete(memory=memory, user=request.user, reason="web")
    except ApplicationError as exc:
        return render(request, "web/_error.html", {"message": exc.message}, status=exc.status_code)
    if request.htmx:
        return render(request, "web/_deleted.html")
    return redirect("web-memories")


@login_required
def context_preview(request):
    from almanac.context.services import context_build

    task = request.GET.get("task", "").strip()
    result, error = None, ""
    if task:
        try:
            max_tokens = int(request.GET.get("max_tokens") or 1500)
            result = context_build(
                user=request.user, tenant=user_tenant(request.user), task=task[:4000], max_tokens=max_tokens
            )
        except (ApplicationError, ValueError) as exc:
            error = getattr(exc, "message", str(exc))
        except Http404:
            error = _("not found")
    return render(
        request,
        "web/context.html",
        {"task": task, "result": result, "error": error, "groups": user_group_keys(request.user)},
    )
