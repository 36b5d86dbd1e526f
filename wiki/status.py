"""Page status as a reader sees it (reads): a manual status, else the open and closed
issues and pull requests among the sections they may see. The writes are
`wiki.services.status`'.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Count

from almanac.selectors import int_array
from wiki.models import Page, PageSection


def page_status_for(page: Page, containers) -> str:
    """A coarse reader status from the stored one (a manual status, else `page.status` if its
    newest issue's container is among the reader's): for callers that read no work counts.
    The API and the context call count the reader's own open work (`page_statuses_apply`)."""
    manual = "status_manual" not in page.get_deferred_fields() and page.status_manual
    if manual:
        return manual
    if page.status != Page.Status.ACTIVE and page.status_container in containers:
        return page.status
    return Page.Status.ACTIVE


def page_work_counts(*, user, page_ids) -> dict[int, dict[str, int]]:
    """Per page: the open and closed issues and pull requests among the sections the user may
    see ({"issue_open": 2, "pull_request_open": 1, "issue_closed": 3, ...}).

    Most pages (customers, people) hold no issue or PR at all: one probe on the partial index
    of work sections settles that before the access-filtered count (its answer is never
    shown, and it saved the context call a query through the access filter)."""
    if not page_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {PageSection._meta.db_table} "
            "WHERE work_kind <> '' AND page_id = ANY(%s::bigint[]))",
            [int_array(list(page_ids))],
        )
        if not cursor.fetchone()[0]:
            return {}
    rows = (
        PageSection.objects.visible_to(user)
        .filter(page_id__in=list(page_ids))
        .exclude(work_kind="")
        .order_by()
        .values_list("page_id", "work_kind", "work_open")
        .annotate(n=Count("id"))
    )
    counts: dict[int, dict[str, int]] = {}
    for page_id, kind, is_open, n in rows:
        key = f"{kind}_{'open' if is_open else 'closed'}"
        counts.setdefault(page_id, {})[key] = counts.get(page_id, {}).get(key, 0) + n
    return counts


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def work_status(*, counts: dict[str, int], manual: str = "", manual_by: str = "", manual_at=None):
    """(status, detail) from a reader's work counts: a manual status wins ("closed", "marked
    closed by ann on 2026-12-01"); open work → "open", "2 open issues, 1 open PR"; only closed
    work → "closed", "3 issues closed"; none → "active", ""."""
    if manual:
        when = f" on {manual_at:%Y-%m-%d}" if manual_at else ""
        return manual, f"marked {manual} by {manual_by or 'an admin'}{when}"
    issues, prs = counts.get("issue_open", 0), counts.get("pull_request_open", 0)
    if issues or prs:
        parts = [_plural(issues, "open issue", "open issues")] if issues else []
        parts += [_plural(prs, "open PR", "open PRs")] if prs else []
        return Page.Status.OPEN.value, ", ".join(parts)
    closed_issues, closed_prs = counts.get("issue_closed", 0), counts.get("pull_request_closed", 0)
    if closed_issues or closed_prs:
        parts = [_plural(closed_issues, "issue", "issues")] if closed_issues else []
        parts += [_plural(closed_prs, "PR", "PRs")] if closed_prs else []
        return Page.Status.CLOSED.value, f"all closed: {' and '.join(parts)}"
    return Page.Status.ACTIVE.value, ""


def page_statuses_apply(*, user, pages) -> None:
    """Set `visible_status` and `status_detail` on each page as this reader sees it: a manual
    status, else the open work among the sections they may see (two queries at most)."""
    pages = list(pages)
    if not pages:
        return
    counts = page_work_counts(user=user, page_ids=[p.pk for p in pages])
    manual = {}
    if any("status_manual" in p.get_deferred_fields() for p in pages):  # a search hit's light page
        rows = Page.objects.filter(id__in=[p.pk for p in pages]).exclude(status_manual="")
        manual = {
            pk: rest
            for pk, *rest in rows.values_list("id", "status_manual", "status_manual_by", "status_manual_at")
        }
    for page in pages:
        if "status_manual" in page.get_deferred_fields():
            marked = manual.get(page.pk, ("", "", None))
        else:
            marked = (page.status_manual, page.status_manual_by, page.status_manual_at)
        page.visible_status, page.status_detail = work_status(
            counts=counts.get(page.pk, {}), manual=marked[0], manual_by=marked[1], manual_at=marked[2]
        )
