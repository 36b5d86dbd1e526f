import itertools
from datetime import UTC, datetime, timedelta

import pytest

from connectors.services.ingest import event_ingest

BASE_TIME = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
_counter = itertools.count(1)


def at(minutes: int) -> str:
    return (BASE_TIME + timedelta(minutes=minutes)).isoformat()


def slack(
    text,
    *,
    channel="C100",
    name="#sales",
    public=True,
    members=None,
    ts=None,
    thread=None,
    kind="message",
    version=1,
    minutes=0,
    author="alice@acme.com",
    tags=None,
    source="slack",
):
    """A normalized Slack-like event payload (the shape of docs/api.md, Connectors)."""
    ts = ts or f"1700000{next(_counter):03d}.000100"
    container = {"key": f"slack:channel:{channel}", "name": name, "public": public}
    if members is not None:
        container["members"] = members
    return {
        "source": source,
        "external_id": f"{channel}/{ts}",
        "version": version,
        "kind": kind,
        "occurred_at": at(minutes),
        "container": container,
        "thread_key": f"slack:thread:{channel}/{thread or ts}",
        "author": author,
        "title": "",
        "text": text,
        "tags": tags or {},
        "url": f"https://acme.slack.com/archives/{channel}/p{ts.replace('.', '')}",
    }


def email(text, *, kind="email", version=1, minutes=0, external_id="<m1@acme.com>", subject="Vercel pricing"):
    """A normalized e-mail event payload of one private thread (alice and bob), about Vercel."""
    return {
        "source": "email",
        "external_id": external_id,
        "version": version,
        "kind": kind,
        "occurred_at": at(minutes),
        "container": {
            "key": "email:thread:t1",
            "name": subject,
            "members": ["alice@acme.com", "bob@acme.com"],
            "public": False,
        },
        "thread_key": "email:thread:t1",
        "author": "alice@acme.com",
        "title": subject,
        "text": text,
        "tags": {"customer": "Vercel"},
        "url": "",
    }


@pytest.fixture
def known_entities(tenant):
    """Customers Vercel and 华为."""
    from wiki.services.entities import entity_ensure

    entity_ensure(tenant=tenant, kind="customer", name="Vercel")
    entity_ensure(tenant=tenant, kind="customer", name="华为")


@pytest.fixture
def push(tenant, django_capture_on_commit_callbacks):
    """Ingest events through the connectors' event_ingest; the compile task runs on commit."""

    def _push(*payloads):
        events = []
        for payload in payloads:
            with django_capture_on_commit_callbacks(execute=True):
                events.append(event_ingest(tenant=tenant, payload=payload)[0])
        for event in events:
            event.refresh_from_db()
        return events if len(events) > 1 else events[0]

    return _push


@pytest.fixture
def vercel_world(tenant, alice, bob, charlie, push):
    """Page 'Vercel' with a public #sales section and a private #finance-internal one (bob only)."""
    public = push(slack("Vercel renewal call went well, they want SSO", tags={"customer": "Vercel"}))
    private = push(
        slack(
            "Vercel asks for a 30% discount; margin floor is 22%",
            channel="C200",
            name="#finance-internal",
            public=False,
            members=["bob@acme.com"],
            author="bob@acme.com",
            minutes=5,
            tags={"customer": "Vercel"},
        )
    )
    return public, private


@pytest.fixture
def carol_user(tenant):
    from almanac.services.users import user_create

    return user_create(tenant=tenant, username="carol", email="carol@acme.com", projects=["Apollo"])


@pytest.fixture(autouse=True)
def _no_summaries(request, settings):
    """Summaries run only in the tests about them (each is a skill run)."""
    if "summary" not in request.node.nodeid:
        settings.WIKI_SUMMARY_ENABLED = False
