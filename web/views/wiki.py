"""The wiki reader: the pages a reader may see, one page, confirming stale sections."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from almanac.errors import ApplicationError
from almanac.labels import acl_restricted, group_labels, labels_ordered
from almanac.selectors import user_tenant
from web.views.common import PER_PAGE, service_message
from wiki.models import PageSection
from wiki.permissions import confirmable_stale_ids
from wiki.selectors import page_get_for_user, page_list, page_sections_rendered
from wiki.services.sections import section_confirm
from wiki.services.summary import page_summary_for_reader
from wiki.status import status_hidden


@login_required
def wiki_list(request):

    kind = request.GET.get("kind", "")
    q = request.GET.get("q", "").strip()[:200]
    pages = page_list(user=request.user, q=q, kind=kind)
    pages = Paginator(pages, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "web/wiki_list.html", {"pages": pages, "kind": kind, "q": q})


@login_required
def wiki_page(request, slug):
    """One page as its reader may see it: the summary made from what they see, then each
    section rendered (Markdown, sanitised) with its source, its container and who can see
    it in plain words; when it was last updated, and a warning when that is long ago."""
    page = page_get_for_user(user=request.user, slug=slug)
    sections = page_sections_rendered(user=request.user, page=page)
    # Only the stale sections this reader may confirm (sender, admin, steward) are offered.
    stale = PageSection.objects.filter(pk__in=confirmable_stale_ids(user=request.user, page=page))
    # Made from the sections this reader sees, as the page API's.
    summary = page_summary_for_reader(user=request.user, page=page)
    context = {
        "page": page,
        "sections": section_rows(user=request.user, sections=sections),
        "stale": stale,
        "summary": summary,
        "status_hidden": status_hidden(page=page),
        **page_times(sections),
    }
    return render(request, "web/wiki_page.html", context)


def section_rows(*, user, sections: list[PageSection]) -> list[dict]:
    """Each section with who can see it, in plain words ("Sales department", "the thread's
    participants"), and whether that is less than the whole company."""
    labels = group_labels(user=user, keys={key for s in sections for key in s.acl})
    tenant = user_tenant(user)
    return [
        {
            "section": s,
            "visible_to": labels_ordered(labels, s.acl),
            "restricted": acl_restricted(acl=s.acl, tenant_key=tenant.group_key),
        }
        for s in sections
    ]


def page_times(sections: list[PageSection]) -> dict:
    """When the page last changed for this reader (its newest visible section's update),
    when its newest visible section was said, and whether that is older than
    WIKI_PAGE_STALE_DAYS."""
    if not sections:
        return {"updated_at": None, "said_at": None, "out_of_date": False}
    said = max(s.occurred_at for s in sections)
    return {
        "updated_at": max(s.updated_at for s in sections),
        "said_at": said,
        "out_of_date": said < timezone.now() - timedelta(days=settings.WIKI_PAGE_STALE_DAYS),
        "stale_days": settings.WIKI_PAGE_STALE_DAYS,
    }


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
