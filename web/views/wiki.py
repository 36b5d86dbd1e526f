"""The wiki reader: the pages a reader may see, one page, confirming stale sections."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from almanac.errors import ApplicationError
from almanac.labels import acl_restricted, group_labels, labels_ordered
from almanac.selectors import user_tenant
from web.templatetags.web_tags import LABELS
from web.views.common import PER_PAGE, service_message
from wiki.models import PageSection
from wiki.permissions import confirmable_stale_ids
from wiki.selectors import page_get_for_user, page_list, page_sections_rendered
from wiki.services.sections import section_confirm
from wiki.services.summary import page_summary_for_reader
from wiki.status import page_work_counts, status_hidden


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
        "status_words": status_words(user=request.user, page=page),
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


def status_words(*, user, page) -> str:
    """What decides the page's status, in the reader's language: who marked it, or what is
    open among the sections they see ("2 open issues, 1 open PR"). The page's own
    `status_detail` says the same in English for the agent API."""
    if page.status_manual:
        status = LABELS["page_status"].get(page.status_manual, page.status_manual)
        words = {"status": status, "who": page.status_manual_by or _("an administrator")}
        if page.status_manual_at:
            words["date"] = page.status_manual_at.strftime("%Y-%m-%d")
            return _("marked %(status)s by %(who)s on %(date)s") % words
        return _("marked %(status)s by %(who)s") % words
    counts = page_work_counts(user=user, page_ids=[page.pk]).get(page.pk, {})
    phrases = []
    if n := counts.get("issue_open"):
        phrases.append(ngettext("%(n)s open issue", "%(n)s open issues", n) % {"n": n})
    if n := counts.get("pull_request_open"):
        phrases.append(ngettext("%(n)s open PR", "%(n)s open PRs", n) % {"n": n})
    if counts.get("customer"):
        phrases += _customer_words(counts)
    elif not phrases and (counts.get("issue_closed") or counts.get("pull_request_closed")):
        closed = counts.get("issue_closed", 0) + counts.get("pull_request_closed", 0)
        phrases = [
            ngettext("%(n)s issue or PR, all closed", "%(n)s issues and PRs, all closed", closed)
            % {"n": closed}
        ]
    return _(", ").join(phrases)


def _customer_words(counts: dict) -> list[str]:
    """A customer page's other open items: threads awaiting our reply, meetings ahead, a renewal due."""
    phrases = []
    if n := counts.get("email_awaiting"):
        phrases.append(
            ngettext("%(n)s e-mail thread awaiting reply", "%(n)s e-mail threads awaiting reply", n)
            % {"n": n}
        )
    if n := counts.get("meeting_upcoming"):
        phrases.append(ngettext("%(n)s upcoming meeting", "%(n)s upcoming meetings", n) % {"n": n})
    if due := counts.get("renewal_due"):
        phrases.append(_("renewal due %(date)s") % {"date": due.strftime("%Y-%m-%d")})
    return phrases


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
