"""The wiki reader: the pages a reader may see, one page, confirming stale sections."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from almanac.errors import ApplicationError
from web.views.common import PER_PAGE, service_message
from wiki.models import PageSection
from wiki.permissions import confirmable_stale_ids
from wiki.selectors import page_get_for_user, page_list, page_sections_rendered
from wiki.services.sections import section_confirm
from wiki.services.summary import page_summary_for_reader


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
