"""A project's status is its open work, counted from the sections the reader may see; a status
a person marks wins until a later fact changes the work."""

import pytest

from almanac.models import AuditEvent
from tests.wiki.conftest import at
from wiki import status
from wiki.models import Page
from wiki.services.status import page_status_mark

pytestmark = pytest.mark.django_db
REPO = "github:repo:acme/orion"


def _item(n, kind="issue", *, version=1, minutes=0, repo=REPO, members=("alice@acme.com", "bob@acme.com")):
    name = repo.removeprefix("github:repo:")
    return {
        "source": "github",
        "external_id": f"{name}#{n}",
        "version": version,
        "kind": kind,
        "occurred_at": at(minutes),
        "container": {"key": repo, "name": name, "public": False, "members": list(members)},
        "thread_key": f"github:issue:{name}#{n}",
        "author": "bob",
        "title": f"Orion item {n}",
        "text": "work on Orion",
        "tags": {"project": "Orion"},
        "url": f"https://github.com/{name}/issues/{n}",
    }


@pytest.fixture
def orion(push, alice, bob, charlie):
    """Issues #41 (closed), #42 (open), PR #17 (open): the page is not closed."""
    push(
        _item(41, minutes=0),
        _item(42, minutes=1),
        _item(17, "pull_request", minutes=2),
        _item(41, "issue_closed", version=2, minutes=3),
    )
    return Page.objects.get(slug="orion")


def test_one_closed_issue_does_not_close_a_project_with_open_work(api, orion):
    assert orion.status == "open"
    body = api.get("/wiki/pages/orion", user="alice").json()
    assert (body["status"], body["status_detail"]) == ("open", "1 open issue, 1 open PR")
    listed = next(p for p in api.get("/wiki/pages", user="alice").json() if p["slug"] == "orion")
    assert (listed["status"], listed["status_detail"]) == ("open", "1 open issue, 1 open PR")


def test_closed_only_when_everything_is_closed(api, push, orion):
    push(_item(42, "issue_closed", version=2, minutes=10), _item(17, "issue_closed", version=2, minutes=11))
    assert Page.objects.get(slug="orion").status == "closed"
    body = api.get("/wiki/pages/orion", user="alice").json()
    assert (body["status"], body["status_detail"]) == ("closed", "all closed: 2 issues and 1 PR")
    push(_item(42, version=3, minutes=20))  # reopened
    assert api.get("/wiki/pages/orion", user="alice").json()["status"] == "open"


def test_the_counts_are_the_readers_own(api, push, orion):
    push(_item(7, repo="github:repo:acme/secret", members=["bob@acme.com"], minutes=5))
    alice = api.get("/wiki/pages/orion", user="alice").json()
    bob = api.get("/wiki/pages/orion", user="bob").json()
    assert alice["status_detail"] == "1 open issue, 1 open PR"
    assert bob["status_detail"] == "2 open issues, 1 open PR"
    assert api.get("/wiki/pages/orion", user="charlie").status_code == 404


def test_an_admin_mark_wins_until_a_later_fact(api, push, orion, alice):
    page_status_mark(page=orion, status="closed", user=alice)
    body = api.get("/wiki/pages/orion", user="bob").json()
    assert body["status"] == "closed" and body["status_detail"].startswith("marked closed by alice")
    assert AuditEvent.objects.filter(action="wiki.page_status_marked", object_id=str(orion.pk)).exists()
    push(_item(43, minutes=30))  # an event dated before the mark (2026-11-30): the mark stays
    assert api.get("/wiki/pages/orion", user="bob").json()["status"] == "closed"
    later = _item(44)
    later["occurred_at"] = "2099-01-01T00:00:00Z"
    push(later)  # a new issue after the mark: the facts decide again
    body = api.get("/wiki/pages/orion", user="bob").json()
    assert (body["status"], body["status_detail"]) == ("open", "3 open issues, 1 open PR")


def test_admin_action_marks_the_status(admin_client, orion):
    response = admin_client.post(
        "/admin/wiki/page/", {"action": "mark_closed", "_selected_action": [orion.pk]}
    )
    assert response.status_code == 302
    orion.refresh_from_db()
    assert orion.status_manual == "closed" and orion.status_manual_by == "admin"


def test_context_items_and_headers_carry_status_and_content_time(api, orion):
    from django.contrib.auth import get_user_model

    from context.services import context_build

    alice = get_user_model().objects.get(username="alice")
    data = context_build(user=alice, tenant=alice.profile.tenant, task="Orion work status", max_tokens=2000)
    item = next(i for b in data["blocks"] if b["kind"] == "wiki" for i in b["items"] if i["id"] == "orion")
    assert item["status"] == "open — 1 open issue, 1 open PR"
    assert item["content_at"].startswith("2026-11-30T10:02")
    assert "## Orion (status: open — 1 open issue, 1 open PR) (latest: 2026-11-30)" in data["prompt"]


def test_work_status_wording():
    assert status.work_status(counts={}) == ("active", "")
    assert status.work_status(counts={"issue_open": 2, "pull_request_open": 1}) == (
        "open",
        "2 open issues, 1 open PR",
    )
