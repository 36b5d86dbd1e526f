"""A customer page says its open items by source (open issues and PRs, e-mail awaiting our
reply, upcoming meetings, a renewal due) and stays active: closed issues never close a
customer. Counted from what the reader may see, so the status is the same for every reader."""

import datetime as dt

import pytest
from django.utils import timezone

from tests.wiki.conftest import at, slack
from wiki.models import Page
from wiki.status import renewal_due

pytestmark = pytest.mark.django_db
REPO = "github:repo:acme/globex-portal"


def _issue(n, kind="issue", *, version=1, minutes=0, members=("alice@acme.com", "bob@acme.com")):
    return {
        "source": "github",
        "external_id": f"acme/globex-portal#{n}",
        "version": version,
        "kind": kind,
        "occurred_at": at(minutes),
        "container": {"key": REPO, "name": "acme/globex-portal", "public": False, "members": list(members)},
        "thread_key": f"github:issue:acme/globex-portal#{n}",
        "author": "bob",
        "title": f"Globex portal bug {n}",
        "text": "fix it",
        "tags": {"customer": "Globex"},
        "url": "",
    }


def _mail(external_id, author, *, minutes, members=("alice@acme.com", "lena@globex.com")):
    return {
        "source": "email",
        "external_id": external_id,
        "version": 1,
        "kind": "email",
        "occurred_at": at(minutes),
        "container": {
            "key": "email:thread:g1",
            "name": "Order form",
            "members": list(members),
            "public": False,
        },
        "thread_key": "email:thread:g1",
        "author": author,
        "title": "Order form",
        "text": "Please find the order form attached",
        "tags": {"customer": "Globex"},
        "url": "",
    }


def _status(api, user):
    page = api.get("/wiki/pages/globex", user=user).json()
    return page["status"], page["status_detail"]


def _ahead(days: int) -> dt.date:
    return timezone.now().date() + dt.timedelta(days=days)


def test_closed_issues_and_an_open_renewal_do_not_read_closed(api, push, alice, bob):
    due = _ahead(60)
    push(
        _issue(1, minutes=0),
        _issue(2, minutes=1),
        _issue(1, "issue_closed", version=2, minutes=2),
        _issue(2, "issue_closed", version=2, minutes=3),
        slack(f"Globex renewal is due {due:%Y-%m-%d}", tags={"customer": "Globex"}, minutes=4),
    )
    assert _status(api, "alice") == ("active", f"renewal due {due:%Y-%m-%d}")
    assert Page.objects.get(slug="globex").status == Page.Status.ACTIVE  # the stored one too


def test_open_issues_are_listed_not_made_a_status(api, push, alice, bob):
    push(_issue(1), _issue(2, "pull_request", minutes=1))
    assert _status(api, "alice") == ("active", "1 open issue, 1 open PR")


def test_an_email_from_the_customer_awaits_reply_until_we_answer(api, push, alice, bob):
    push(_mail("<g1@globex.com>", "lena@globex.com", minutes=0))
    assert _status(api, "alice") == ("active", "1 e-mail thread awaiting reply")
    push(_mail("<g2@acme.com>", "alice@acme.com", minutes=5))
    assert _status(api, "alice") == ("active", "")


def test_upcoming_meetings_are_open_items(api, push, alice):
    future = timezone.now() + dt.timedelta(days=3)
    meeting = {
        "source": "calendar",
        "external_id": "qbr-1",
        "version": 1,
        "kind": "calendar_event",
        "occurred_at": future.isoformat(),
        "container": {"key": "calendar:event:qbr-1", "name": "Globex QBR", "members": ["alice@acme.com"]},
        "thread_key": "calendar:event:qbr-1",
        "author": "alice@acme.com",
        "title": "Globex QBR",
        "text": "Quarterly review",
        "tags": {"customer": "Globex"},
        "url": "",
    }
    push(meeting, {**meeting, "external_id": "qbr-0", "thread_key": "calendar:event:qbr-0",
                   "container": {**meeting["container"], "key": "calendar:event:qbr-0"},
                   "occurred_at": at(-60 * 24)})  # fmt: skip
    assert _status(api, "alice") == ("active", "1 upcoming meeting")


def test_every_reader_gets_the_same_status_and_only_the_items_they_may_see(api, push, alice, bob, charlie):
    due = _ahead(30)
    push(
        slack("Globex signed the pilot", tags={"customer": "Globex"}),
        slack(
            f"Globex renewal on {due:%Y-%m-%d}, floor is 20% off",
            channel="C200",
            name="#finance-internal",
            public=False,
            members=["bob@acme.com"],
            author="bob@acme.com",
            tags={"customer": "Globex"},
            minutes=1,
        ),
        _issue(7, members=("bob@acme.com",), minutes=2),
    )
    assert _status(api, "bob") == ("active", f"1 open issue, renewal due {due:%Y-%m-%d}")
    assert _status(api, "alice") == ("active", "")
    assert _status(api, "charlie") == ("active", "")


def test_renewal_due_reads_the_newest_date_unless_renewed_or_past():
    today = dt.date(2026, 12, 5)
    assert renewal_due("[2026-11-01] ann: Globex renewal is due 2027-01-15", today=today) == dt.date(
        2027, 1, 15
    )
    assert renewal_due("[2026-11-01] 王芳: 华为的续约日期是2027年3月1日", today=today) == dt.date(2027, 3, 1)
    renewed = "[2026-11-01] ann: Globex renewal is due 2027-01-15\n[2026-11-20] ann: the contract was renewed"
    assert renewal_due(renewed, today=today) is None
    assert renewal_due("[2026-01-01] ann: renewal is due 2026-02-01", today=today) is None
    assert renewal_due("[2026-11-01] ann: we should talk about the renewal", today=today) is None
