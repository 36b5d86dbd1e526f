"""Order independence of the compiler (wiki.services.compiler): the compiled wiki depends only
on the set of events, not on the order they arrive or are compiled in, nor on whether they
are compiled one by one or in batches."""

import itertools

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.services.ingest import event_ingest
from wiki.models import Page
from wiki.services.backlog import compile_pending
from wiki.services.entities import entity_create, entity_ensure

from .conftest import at, slack


def _event(source, external_id, kind, minutes, container, thread, text, *, title="", author="alice@acme.com",
           tags=None, version=1, public=False, members=("alice@acme.com", "bob@acme.com")):  # fmt: skip
    return {
        "source": source,
        "external_id": external_id,
        "version": version,
        "kind": kind,
        "occurred_at": at(minutes),
        "container": {
            "key": container,
            "name": container.split(":")[-1],
            "public": public,
            "members": [] if public else list(members),
        },  # fmt: skip
        "thread_key": thread,
        "author": author,
        "title": title,
        "text": text,
        "tags": tags or {},
    }


# All five sources; Globex is first named in a private repo's tags (and a Chinese customer in
# private notes), e-mail and Slack name them in text, one e-mail only by domain (an alias
# added late), a meeting names nothing, an issue is closed, a message edited.
EVENTS = [
    _event(
        "github",
        "acme/deals#1",
        "issue",
        0,
        "github:repo:acme/deals",
        "gh:1",
        "Globex wants 3 years",
        title="Globex deal",
        tags={"customer": "Globex"},
        members=("bob@acme.com",),
    ),  # fmt: skip
    _event(
        "github",
        "acme/deals#1",
        "issue_closed",
        50,
        "github:repo:acme/deals",
        "gh:1",
        "Globex wants 3 years",
        title="Globex deal",
        tags={"customer": "Globex"},
        version=2,
        members=("bob@acme.com",),
    ),  # fmt: skip
    _event(
        "github",
        "acme/orion#42",
        "issue",
        3,
        "github:repo:acme/orion",
        "gh:42",
        "Orion export is slow",
        title="Export",
        tags={"project": "Orion"},
    ),  # fmt: skip
    _event(
        "email",
        "<m1@x>",
        "email",
        5,
        "email:thread:t1",
        "email:thread:t1",
        "Globex accepted $172,000 per year",
        title="Renewal",
    ),  # fmt: skip
    _event(
        "email",
        "<m2@x>",
        "email",
        6,
        "email:thread:t2",
        "email:thread:t2",
        "Signed form attached",
        title="Order form",
        author="hank@globex.com",
    ),  # fmt: skip
    _event(
        "email", "<m3@x>", "email_recalled", 9, "email:thread:t1", "email:thread:t1", "", title="Renewal"
    ),  # fmt: skip
    _event(
        "slack",
        "CC/1",
        "message",
        7,
        "slack:channel:CC",
        "slack:CC/1",
        "Globex asked about SSO for Orion",
        public=True,
    ),  # fmt: skip
    _event("slack", "CC/2", "message", 8, "slack:channel:CC", "slack:CC/1", "Weather is nice", public=True),
    _event(
        "slack",
        "CC/2",
        "message_changed",
        12,
        "slack:channel:CC",
        "slack:CC/1",
        "华为 also asked",
        public=True,
        version=2,
    ),  # fmt: skip
    # an item moved to another thread (and channel) by its edit
    _event(
        "slack", "CC/3", "message", 14, "slack:channel:CC", "slack:CC/1", "Globex pilot starts", public=True
    ),
    _event(
        "slack",
        "CC/3",
        "message_changed",
        15,
        "slack:channel:CD",
        "slack:CD/3",
        "Globex pilot starts Monday",
        version=2,
    ),
    _event(
        "calendar",
        "uid-1",
        "calendar_event",
        10,
        "calendar:event:uid-1",
        "calendar:event:uid-1",
        "Weekly sync",
        title="Team sync",
    ),  # fmt: skip
    _event(
        "calendar",
        "uid-2",
        "calendar_event",
        11,
        "calendar:event:uid-2",
        "calendar:event:uid-2",
        "Orion demo for 华为",
        title="Demo",
    ),  # fmt: skip
    _event(
        "notes",
        "notes/huawei.md",
        "meeting_note",
        13,
        "notes:meeting:hw",
        "notes:hw",
        "续约底价 120 万",
        title="华为 续约",
        tags={"customer": "华为"},
        members=("bob@acme.com",),
    ),  # fmt: skip
]
ALIAS = "alias"  # the admin adds the domain alias of Globex at this point of the order


def _dump(tenant) -> list:
    """The wiki as readers get it: pages with sections, their sections' texts and readers."""
    pages = []
    for page in Page.objects.filter(tenant=tenant).prefetch_related("sections"):
        sections = sorted(
            (s.thread_key, s.container_key, s.title, s.content, tuple(sorted(s.acl)), s.stale, s.work_open)
            for s in page.sections.all()
        )
        if sections:
            pages.append((page.kind, page.slug, page.title, page.status, sections))
    return sorted(pages)


def _stats(tenant) -> tuple:
    """The wiki's keyword statistics (document frequencies, corpus size)."""
    from almanac.models import CorpusStat, TermStat

    terms = sorted(TermStat.objects.filter(tenant=tenant, corpus="wiki").values_list("term", "df"))
    return terms, list(
        CorpusStat.objects.filter(tenant=tenant, corpus="wiki").values_list("docs", "total_len")
    )


def _diff(order, got, reference) -> str:
    flat = [{(p[:4], s) for p in dump for s in p[4]} for dump in (got, reference)]
    return f"order {order}: only here {sorted(flat[0] - flat[1])}, only in the reference {sorted(flat[1] - flat[0])}"


def _add_alias(tenant) -> None:
    """An admin names Globex, with its e-mail domain (created, or its alias added)."""
    entity_ensure(tenant=tenant, kind="customer", name="Globex", aliases=["@globex.com"])


def _arrive(tenant, order, capture, *, stats: bool = False):
    """Each step as it arrives at a running service (compiled on commit); the dump (and the
    keyword statistics); all undone."""
    with transaction.atomic():
        for step in order:
            with capture(execute=True):
                if step == ALIAS:
                    _add_alias(tenant)
                else:
                    event_ingest(tenant=tenant, payload=EVENTS[step])
        dump = (_dump(tenant), _stats(tenant)) if stats else _dump(tenant)
        transaction.set_rollback(True)
    return dump


def test_the_reference_order_links_every_source(tenant, alice, bob, django_capture_on_commit_callbacks):
    dump = _arrive(tenant, [ALIAS, *range(len(EVENTS))], django_capture_on_commit_callbacks)
    titles = {page[2]: page for page in dump}
    globex = {s[1].split(":")[0] for s in titles["Globex"][4]}
    assert globex == {"github", "email", "slack"}  # the repo, both e-mails, the channel
    assert {s[1] for s in titles["Meetings"][4]} == {"calendar:event:uid-1"}
    assert "CC" not in titles  # the channel's thread names customers: no topic page


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations([ALIAS, *range(len(EVENTS))]))
def test_any_arrival_order_compiles_the_same_wiki(
    tenant, alice, bob, django_capture_on_commit_callbacks, order
):
    reference = _arrive(tenant, [ALIAS, *range(len(EVENTS))], django_capture_on_commit_callbacks)
    got = _arrive(tenant, order, django_capture_on_commit_callbacks)
    assert got == reference, _diff(order, got, reference)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(len(EVENTS))))
def test_a_batch_compile_makes_the_wiki_one_by_one_makes(tenant, alice, bob, django_capture_on_commit_callbacks,
                                                         order):  # fmt: skip
    one_by_one = _arrive(tenant, [ALIAS, *order], django_capture_on_commit_callbacks, stats=True)
    with transaction.atomic():
        with django_capture_on_commit_callbacks(execute=True):
            _add_alias(tenant)
        for step in order:  # stored while nothing compiles (an import), then one batch
            event_ingest(tenant=tenant, payload=EVENTS[step])
        with django_capture_on_commit_callbacks(execute=True):
            assert compile_pending(tenant=tenant) == len(EVENTS)
        batched = (_dump(tenant), _stats(tenant))
        transaction.set_rollback(True)
    assert batched == one_by_one


def _spelled(tenant, order, capture, *, admin_name: str = "") -> str:
    """The customer page's title after three tags spell its name three ways, in `order`."""
    spellings = [
        slack(
            "Kickoff with Initech next week",
            ts="1700000101.000100",
            minutes=5,
            tags={"customer": "Initech Corp."},
        ),
        slack("Initech signed", ts="1700000102.000100", minutes=1, tags={"customer": "Initech"}),
        slack("initech renewal", ts="1700000103.000100", minutes=1, tags={"customer": "INITECH"}),
    ]
    with transaction.atomic():
        if admin_name:
            entity_create(tenant=tenant, kind="customer", name=admin_name)
        for step in order:
            with capture(execute=True):
                event_ingest(tenant=tenant, payload=spellings[step])
        title = Page.objects.get(tenant=tenant, slug="initech").title
        transaction.set_rollback(True)
    return title


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_a_name_spelled_several_ways_titles_its_page_with_the_earliest_spelling(
    tenant, alice, django_capture_on_commit_callbacks, order
):
    # "Initech" and "INITECH" are equally early: the first in code point order wins
    assert _spelled(tenant, order, django_capture_on_commit_callbacks) == "INITECH"


def test_a_name_an_admin_gave_is_kept_whatever_the_tags_spell(
    tenant, alice, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    assert _spelled(tenant, [2, 1, 0], capture, admin_name="Initech Corporation") == "Initech Corporation"


def _titled(tenant, payloads, capture) -> str:
    with transaction.atomic():
        for payload in payloads:
            with capture(execute=True):
                event_ingest(tenant=tenant, payload=payload)
        title = Page.objects.get(tenant=tenant, kind="customer").title
        transaction.set_rollback(True)
    return title


def test_a_private_spelling_never_titles_the_page_and_a_public_one_replaces_it(
    tenant, alice, bob, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    public = slack("续约进展顺利", ts="1700000301.000100", minutes=5, tags={"customer": "阿里巴巴"})
    private = slack(  # earlier, and its spelling folds to the same name: the bracketed words are private
        "内部讨论",
        ts="1700000302.000100",
        minutes=1,
        channel="C999",
        name="#mna",
        public=False,
        members=["bob@acme.com"],
        tags={"customer": "阿里巴巴（收购谈判）有限公司"},
    )
    assert _titled(tenant, [public, private], capture) == "阿里巴巴"
    assert _titled(tenant, [private, public], capture) == "阿里巴巴"
