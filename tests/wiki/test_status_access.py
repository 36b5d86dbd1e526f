"""A project's status is read through the access filter too (docs/design.md, Identity and access): a
private repo's
issue closing a project says nothing to a reader who cannot read that repo."""

import pytest

from tests.wiki.conftest import at, slack
from wiki import selectors
from wiki.models import Page

pytestmark = pytest.mark.django_db
REPO = "github:repo:acme/secret"


def _issue(kind, *, version, minutes, public=False, members=("bob@acme.com",)):
    container = {"key": REPO, "name": "acme/secret", "public": public}
    if not public:
        container["members"] = list(members)
    return {
        "source": "github",
        "external_id": "acme/secret#3",
        "version": version,
        "kind": kind,
        "occurred_at": at(minutes),
        "container": container,
        "thread_key": "github:issue:acme/secret#3",
        "author": "bob",
        "title": "Wind down Apollo",
        "text": "Apollo is cancelled",
        "tags": {"project": "Apollo"},
        "url": "https://github.com/acme/secret/issues/3",
    }


@pytest.fixture
def apollo(push, alice, bob, charlie):
    push(slack("Apollo kickoff notes for everyone", tags={"project": "Apollo"}))
    push(_issue("issue", version=1, minutes=5), _issue("issue_closed", version=2, minutes=10))
    page = Page.objects.get(slug="apollo")
    assert page.status == "closed" and page.status_container == REPO  # the premise
    return page


def _statuses(api, user: str) -> dict[str, str]:
    listed = api.get("/wiki/pages", user=user).json()
    found = api.post("/wiki/search", {"user": user, "query": "Apollo kickoff", "top_k": 5}).json()
    page = api.get("/wiki/pages/apollo", user=user).json()
    return {
        "list": next(p["status"] for p in listed if p["slug"] == "apollo"),
        "search": next(r["page"]["status"] for r in found["results"] if r["page"]["slug"] == "apollo"),
        "page": page["status"],
    }


def test_a_reader_outside_the_repo_does_not_learn_the_status(api, apollo):
    assert _statuses(api, "charlie") == {"list": "active", "search": "active", "page": "active"}
    assert _statuses(api, "bob") == {"list": "closed", "search": "closed", "page": "closed"}


def test_the_status_goes_with_the_repo_membership(api, push, apollo):
    push(
        {
            **_issue("membership_removed", version=1, minutes=20),
            "external_id": "acme/secret/membership/1",
            "thread_key": "github:membership:acme/secret",
            "text": "",
            "tags": {},
        }
    )
    assert _statuses(api, "bob")["page"] == "active"


def test_a_public_repos_status_is_everyones(api, push, charlie):
    push(slack("Apollo kickoff notes for everyone", tags={"project": "Apollo"}))
    push(
        _issue("issue", version=1, minutes=5, public=True),
        _issue("issue_closed", version=2, minutes=10, public=True),
    )
    assert _statuses(api, "charlie") == {"list": "closed", "search": "closed", "page": "closed"}


def test_the_page_selector_sets_the_readers_status(apollo, charlie, bob):
    assert selectors.page_get_for_user(user=charlie, slug="apollo").visible_status == "active"
    assert selectors.page_get_for_user(user=bob, slug="apollo").visible_status == "closed"
