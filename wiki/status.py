"""Page status as a reader sees it (reads): a manual status, else what is open among the
sections they may see. A project (any page but a customer's) is open while an issue or pull
request of it is; a customer page says its open items by source instead (open issues and
PRs, e-mail threads awaiting our reply, upcoming meetings, a renewal due), and stays
`active`: closed issues never close a customer. The writes are `wiki.services.status`'.
"""

from __future__ import annotations

import functools
import re
from datetime import date

from django.db import connection
from django.db.models import Case, CharField, Count, Q, Value, When
from django.utils import timezone

from almanac.selectors import int_array
from almanac.text.dates import find_date
from almanac.text.statements import statements
from connectors.models import Event
from wiki.models import Entity, Page, PageSection
from wiki.services.entities import internal_domains

# What a line must say for it to be read for a renewal date (the SQL filter; `statements`
# decides).
RENEWAL_CUE = r"renew|续约|续签|续费"
_LINE = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\] [^:]*: (.*)$")


def page_status_for(page: Page, containers) -> str:
    """A coarse reader status from the stored one (a manual status, else `page.status` if its
    newest issue's container is among the reader's): for callers that read no work counts.
    The API and the context call count the reader's own open work (`page_statuses_apply`)."""
    manual = "status_manual" not in page.get_deferred_fields() and page.status_manual
    if manual:
        return manual
    if page.kind == Entity.Kind.CUSTOMER:
        return Page.Status.ACTIVE
    if page.status != Page.Status.ACTIVE and page.status_container in containers:
        return page.status
    return Page.Status.ACTIVE


def page_work_counts(*, user, page_ids, customers=None, open_items: bool = True) -> dict[int, dict]:
    """Per page: what is open on it among the sections the user may see: the open and closed
    issues and pull requests ({"issue_open": 2, "pull_request_open": 1, "issue_closed": 3}),
    and on a customer's page its other open items (`customer_open_items`), marked
    `"customer": 1`. `work_status` words it. `customers`: which of the pages are customers'
    (None: read). Without `open_items` a customer's page is marked only, its open items
    not read (the context call: three queries it does not need, the items being in the
    sections it shows)."""
    counts = _issue_counts(user=user, page_ids=page_ids)
    if customers is None:
        rows = Page.objects.filter(id__in=list(page_ids), kind=Entity.Kind.CUSTOMER)
        customers = list(rows.values_list("id", flat=True))
    if customers:
        items = customer_open_items(user=user, page_ids=customers) if open_items else {}
        for pid in customers:
            counts.setdefault(pid, {}).update(items.get(pid, {}), customer=1)
    return counts


def _issue_counts(*, user, page_ids) -> dict[int, dict]:
    """Per page: the open and closed issues and pull requests among the sections the user may
    see.

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


def customer_open_items(*, user, page_ids) -> dict[int, dict]:
    """Per customer page, the open items among the sections the user may see (non-stale):
    `email_awaiting`, e-mail threads whose newest message came from outside the company (a
    customer waits for our reply); `meeting_upcoming`, meetings not yet held;
    `renewal_due`, the date of a renewal its lines state and none says is done, if still
    ahead. Four queries at most."""
    now = timezone.now()
    renewal = Q(content__iregex=RENEWAL_CUE)
    rows = (
        PageSection.objects.visible_to(user)
        .filter(page_id__in=list(page_ids))
        .filter(
            Q(container_key__startswith="email:")
            | Q(container_key__startswith="calendar:", occurred_at__gte=now)
            | renewal
        )
        .annotate(text=Case(When(renewal, then="content"), default=Value(""), output_field=CharField()))
        .values_list("page_id", "thread_key", "container_key", "occurred_at", "text")
    )
    items: dict[int, dict] = {}
    mail: dict[str, set[int]] = {}
    for page_id, thread_key, container_key, occurred_at, text in rows:
        found = items.setdefault(page_id, {})
        if container_key.startswith("email:"):
            mail.setdefault(thread_key, set()).add(page_id)
        elif container_key.startswith("calendar:") and occurred_at >= now:
            found["meeting_upcoming"] = found.get("meeting_upcoming", 0) + 1
        due = renewal_due(text, today=now.date()) if text else None
        if due and (found.get("renewal_due") is None or due < found["renewal_due"]):
            found["renewal_due"] = due
    for thread_key in _awaiting_reply(user=user, thread_keys=mail):
        for page_id in mail[thread_key]:
            items[page_id]["email_awaiting"] = items[page_id].get("email_awaiting", 0) + 1
    return items


def _awaiting_reply(*, user, thread_keys) -> list[str]:
    """The e-mail threads among `thread_keys` whose newest message is from outside the
    company (its sender's domain is none of the tenant's users')."""
    if not thread_keys:
        return []
    newest = (
        Event.objects.filter(tenant_id=user.profile.tenant_id, thread_key__in=sorted(thread_keys))
        .filter(kind=Event.Kind.EMAIL)
        .order_by("thread_key", "-occurred_at", "-id")
        .distinct("thread_key")
        .values_list("thread_key", "author")
    )
    internal = internal_domains(user.profile.tenant)
    return [
        key for key, author in newest if "@" in author and author.rpartition("@")[2].lower() not in internal
    ]


def renewal_due(text: str, *, today: date) -> date | None:
    """The renewal date a section's lines state (the newest line that states one), unless a
    later line says it was renewed, or it has passed."""
    due = _renewal_stated(text)
    return due if due and due >= today else None


@functools.lru_cache(maxsize=1024)
def _renewal_stated(text: str) -> date | None:
    """The renewal date `text`'s lines state and no later line says is done (read once per
    text: the context call asks for the same sections again and again)."""
    due, said = None, None
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        said_on = date.fromisoformat(match.group(1))
        for stated in statements(match.group(2)):
            if stated.attribute == "date:renewal":
                due = find_date(stated.shown, said_on) or due
                said = said_on
            elif stated.attribute == "status" and "renewed" in stated.value and said and said_on >= said:
                due = None
    return due


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _customer_status(counts: dict) -> tuple[str, str]:
    """("active", its open items by source) for a customer page."""
    parts = []
    issues, prs = counts.get("issue_open", 0), counts.get("pull_request_open", 0)
    if issues:
        parts.append(_plural(issues, "open issue", "open issues"))
    if prs:
        parts.append(_plural(prs, "open PR", "open PRs"))
    if counts.get("email_awaiting"):
        parts.append(_plural(counts["email_awaiting"], "e-mail thread", "e-mail threads") + " awaiting reply")
    if counts.get("meeting_upcoming"):
        parts.append(_plural(counts["meeting_upcoming"], "upcoming meeting", "upcoming meetings"))
    if counts.get("renewal_due"):
        parts.append(f"renewal due {counts['renewal_due']:%Y-%m-%d}")
    return Page.Status.ACTIVE.value, ", ".join(parts)


def work_status(*, counts: dict, manual: str = "", manual_by: str = "", manual_at=None):
    """(status, detail) from a reader's work counts: a manual status wins ("closed", "marked
    closed by ann on 2026-12-01"); open work → "open", "2 open issues, 1 open PR"; only closed
    work → "closed", "3 issues closed"; none → "active", "". A customer page (counts marked
    `customer`) is "active" with its open items by source: "1 open issue, 1 e-mail thread
    awaiting reply, renewal due 2027-01-15"."""
    if manual:
        when = f" on {manual_at:%Y-%m-%d}" if manual_at else ""
        return manual, f"marked {manual} by {manual_by or 'an admin'}{when}"
    if counts.get("customer"):
        return _customer_status(counts)
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
    status, else what is open among the sections they may see (`page_work_counts`)."""
    pages = list(pages)
    if not pages:
        return
    customers = [p.pk for p in pages if p.kind == Entity.Kind.CUSTOMER]
    counts = page_work_counts(user=user, page_ids=[p.pk for p in pages], customers=customers)
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


def status_hidden(*, page: Page) -> bool:
    """Whether the page's status, as `page_statuses_apply` set it for a reader
    (`visible_status`), is not what every section of it would say: sections the reader may
    not see hold the work that decides it (a private repository's open issue). The reader
    is then told that the status is theirs (docs/wiki.md, Status from the facts); nothing
    of those sections is shown. A manual status and a customer's are the same for everyone."""
    if page.status_manual or page.kind == Entity.Kind.CUSTOMER:
        return False
    rows = (
        PageSection.objects.filter(page=page, stale=False)
        .exclude(work_kind="")
        .order_by()
        .values_list("work_kind", "work_open")
        .annotate(n=Count("id"))
    )
    counts = {f"{kind}_{'open' if is_open else 'closed'}": n for kind, is_open, n in rows}
    return work_status(counts=counts)[0] != getattr(page, "visible_status", Page.Status.ACTIVE)
