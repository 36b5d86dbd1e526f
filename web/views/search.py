"""Search: the reader's pages and memories for a query (the home page when logged in)."""

from __future__ import annotations

from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from memories.selectors import memory_search
from web.views.common import login_required_htmx
from wiki.search import page_search


def home(request):
    if not request.user.is_authenticated:
        return render(request, "web/home.html")
    return render(request, "web/search.html", search_results(user=request.user, q=request.GET.get("q", "")))


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
