"""Search: the reader's pages and memories for a query (the home page when logged in).

Results are shown as people read them: pages, then memories, each with the passage that
matched and the query's words marked; a passage the compiler wrote on several pages (one
e-mail naming two customers) is shown once, with all its pages. Scores stay out of sight.
"""

from __future__ import annotations

from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from almanac.text.passages import best_passage, query_terms
from memories.selectors import memory_search
from web.views.common import login_required_htmx
from wiki.search import page_search

RESULTS = 5


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
    pages = page_search(user=user, query=q, top_k=RESULTS) if q else []
    # A person browsing is not an agent recalling: no hit counts (they rank and keep memories).
    memories = memory_search(user=user, query=q, top_k=RESULTS) if q else []
    terms = query_terms(q) if q else []
    return {
        "q": q,
        "pages": page_cards(pages, q),
        "memories": [
            {"memory": hit.memory, "passage": best_passage(hit.memory.content, terms)} for hit in memories
        ],
    }


def _text_key(section) -> str:
    """What is equal for the copies of one thread's section on several pages."""
    return section.content_digest or section.content


def page_cards(results: list[dict], q: str) -> list[dict]:
    """One card per page, best first: the page, its best passage for the query (the words
    of the page's own name left aside: every section of it says them) and `also`, the
    other pages that hold that same passage. A page whose every hit is shown already joins
    the card that shows it instead of repeating it."""
    cards: list[dict] = []
    shown: dict[str, dict] = {}
    for result in results:
        page = result["page"]
        terms = query_terms(q, ignore=[page.title])
        ranked = sorted(
            (
                (best_passage(hit.section.content, terms), rank, hit.section)
                for rank, hit in enumerate(result["hits"])
            ),
            key=lambda row: (-row[0].terms, row[1]),
        )
        fresh = [row for row in ranked if _text_key(row[2]) not in shown]
        if ranked and not fresh:
            shown[_text_key(ranked[0][2])]["also"].append(page)
            continue
        passage, _, section = fresh[0] if fresh else (None, 0, None)
        card = {"page": page, "passage": passage, "section": section, "also": []}
        if section is not None:
            shown[_text_key(section)] = card
        cards.append(card)
    return cards
