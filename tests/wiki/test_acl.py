"""Section-level security: a private container's content never reaches a non-member."""

from django.utils import timezone

from almanac.models import AccessGroup
from almanac.services.tenancy import membership_remove
from tests.wiki.conftest import slack
from wiki import search, selectors
from wiki.models import Page, PageSection

SECRET = "margin floor"


def _page_contents(api, user):
    response = api.get("/wiki/pages/vercel", user=user)
    assert response.status_code == 200, response.content
    return " ".join(s["content"] for s in response.json()["sections"])


def test_private_section_hidden_from_non_member_on_get(api, vercel_world):
    assert SECRET not in _page_contents(api, "alice")
    assert "SSO" in _page_contents(api, "alice")
    assert SECRET in _page_contents(api, "bob")


def test_private_section_hidden_from_non_member_on_list(api, vercel_world):
    alice_pages = {p["slug"]: p["sections"] for p in api.get("/wiki/pages", user="alice").json()}
    bob_pages = {p["slug"]: p["sections"] for p in api.get("/wiki/pages", user="bob").json()}
    assert alice_pages["vercel"] == 1
    assert bob_pages["vercel"] == 2


def test_private_section_hidden_from_non_member_on_search(api, vercel_world):
    for user, expected in (("alice", False), ("charlie", False), ("bob", True)):
        body = api.post("/wiki/search", {"user": user, "query": "discount margin floor"}).json()
        texts = " ".join(s["section"]["content"] for r in body["results"] for s in r["sections"])
        assert (SECRET in texts) is expected, user


def test_private_section_hidden_from_non_member_in_section_search(vercel_world, alice, bob):
    alice_hits = search.section_search(user=alice, query="Vercel discount")
    bob_hits = search.section_search(user=bob, query="Vercel discount")
    assert all(SECRET not in h.section.content for h in alice_hits)
    assert any(SECRET in h.section.content for h in bob_hits)
    # (the authors' person pages, made by the compile, hold a tenant-wide directory section)
    assert {h.section.container_key for h in alice_hits} - {"tenant:acme"} == {"slack:channel:C100"}


def test_page_with_only_private_sections_is_invisible(api, push, alice, bob):
    push(
        slack(
            "Budget for Initech is frozen",
            channel="C300",
            name="#finance-internal",
            public=False,
            members=["bob@acme.com"],
            tags={"customer": "Initech"},
        )
    )
    assert api.get("/wiki/pages/initech", user="alice").status_code == 404
    assert "initech" not in {p["slug"] for p in api.get("/wiki/pages", user="alice").json()}
    assert api.get("/wiki/pages/initech", user="bob").status_code == 200


def test_removing_a_member_hides_the_section_on_the_next_query(api, tenant, vercel_world, bob):
    assert SECRET in _page_contents(api, "bob")
    group = AccessGroup.objects.get(tenant=tenant, key="slack:channel:C200")
    membership_remove(user=bob, group=group)
    assert SECRET not in _page_contents(api, "bob")
    assert not search.section_search(user=bob, query="margin floor discount") or all(
        SECRET not in h.section.content for h in search.section_search(user=bob, query="margin floor")
    )


def test_membership_removed_event_hides_the_section(api, push, vercel_world, bob):
    push(
        slack(
            "",
            channel="C200",
            name="#finance-internal",
            public=False,
            members=["bob@acme.com"],
            kind="membership_removed",
            ts="1700009999.000100",
            minutes=10,  # after the list of minute 5: last write by event time wins
        )
    )
    assert SECRET not in _page_contents(api, "bob")


def test_unknown_members_are_granted_nothing(push, tenant, alice):
    push(
        slack(
            "Secret roadmap for Globex",
            channel="C400",
            name="#exec",
            public=False,
            members=["stranger@elsewhere.com"],
            tags={"customer": "Globex Corp"},
        )
    )
    assert PageSection.objects.filter(page__slug="globex").exists()
    assert not PageSection.objects.visible_to(alice).filter(page__slug="globex").exists()


def test_other_tenant_user_sees_nothing(vercel_world, mallory):
    assert not PageSection.objects.visible_to(mallory).exists()
    assert search.section_search(user=mallory, query="Vercel") == []


def test_anonymous_user_sees_nothing(vercel_world):
    from django.contrib.auth.models import AnonymousUser

    assert not PageSection.objects.visible_to(AnonymousUser()).exists()
    assert not PageSection.objects.visible_to(None).exists()


def test_section_acl_is_the_container_plus_tenant_when_public(vercel_world, tenant):
    acls = {s.container_key: s.acl for s in PageSection.objects.filter(page__slug="vercel")}
    assert acls["slack:channel:C100"] == sorted(["slack:channel:C100", tenant.group_key])
    assert acls["slack:channel:C200"] == ["slack:channel:C200"]
    assert Page.objects.get(slug="vercel").kind == "customer"


def _deals_turned_private():
    """A newer message in #deals, which is now private (bob only)."""
    return slack(
        "Vercel discount approved",
        channel="C500",
        name="#deals",
        public=False,
        members=["bob@acme.com"],
        minutes=10,
        tags={"customer": "Vercel"},
    )


def test_a_channel_turned_private_hides_its_older_threads_too(api, push, alice, bob):
    push(slack("Vercel pilot starts Monday", channel="C500", name="#deals", tags={"customer": "Vercel"}))
    assert "pilot" in _page_contents(api, "alice")
    push(_deals_turned_private())
    assert api.get("/wiki/pages/vercel", user="alice").status_code == 404
    assert "pilot" in _page_contents(api, "bob")


def test_a_channel_turned_private_is_hidden_before_the_worker_compiles(api, push, tenant, alice, bob):
    from connectors.models import Event
    from connectors.services.ingest import event_ingest

    push(slack("Vercel pilot starts Monday", channel="C500", name="#deals", tags={"customer": "Vercel"}))
    event, _ = event_ingest(tenant=tenant, payload=_deals_turned_private())  # its compile not run yet
    assert Event.objects.get(pk=event.pk).state == Event.State.PENDING
    assert api.get("/wiki/pages/vercel", user="alice").status_code == 404
    assert "pilot" in _page_contents(api, "bob")


def test_vector_lane_is_not_starved_by_many_invisible_sections(tenant, alice, bob):
    """Filtered HNSW must still return the reader's few visible rows among many hidden ones."""
    from datetime import UTC, datetime

    from wiki.services.entities import entity_ensure
    from wiki.services.sections import SectionDraft, embed_mean_prewarm, section_write

    embed_mean_prewarm([f"Vercel pricing note {i}" for i in range(63)])  # one batch
    page = entity_ensure(tenant=tenant, kind="customer", name="Vercel").page

    def draft(i, acl):
        return SectionDraft(
            thread_key=f"t{i}", container_key=acl[0], container_name="", title="", content=f"Vercel pricing note {i}",
            occurred_at=datetime(2026, 1, 1, tzinfo=UTC), acl=acl, authors=[], event_ids=[], source_list=[],
            embed_texts=[f"Vercel pricing note {i}"],
        )  # fmt: skip

    for i in range(60):
        section_write(page=page, draft=draft(i, ["slack:channel:SECRET"]), reason="test")
    for i in range(60, 63):
        section_write(page=page, draft=draft(i, [tenant.group_key]), reason="test")
    hits = search.section_search(user=alice, query="Vercel pricing note")
    assert sorted(h.section.thread_key for h in hits) == ["t60", "t61", "t62"]
    assert all(h.breakdown["vector_rank"] is not None for h in hits)


def test_page_texts_for_reader_never_returns_a_section_the_reader_may_not_see(
    tenant, vercel_world, alice, bob
):
    page = Page.objects.get(slug="vercel")
    private = PageSection.objects.get(page=page, content__contains=SECRET)
    asked = {page.pk: [private.pk]}
    as_alice = selectors.page_texts_for_reader(user=alice, page_ids=[page.pk], limit=10, matched=asked)[
        page.pk
    ]
    assert private.pk not in {s.id for s in as_alice.newest + as_alice.matched}
    as_bob = selectors.page_texts_for_reader(user=bob, page_ids=[page.pk], limit=10, matched=asked)[page.pk]
    assert [s.id for s in as_bob.matched] == [private.pk]
    assert private.pk in {s.id for s in as_bob.newest}
    # Revoked: gone on the next read, from the newest sections and from the asked-for ones.
    membership_remove(user=bob, group=AccessGroup.objects.get(tenant=tenant, key="slack:channel:C200"))
    as_bob = selectors.page_texts_for_reader(user=bob, page_ids=[page.pk], limit=10, matched=asked)[page.pk]
    assert private.pk not in {s.id for s in as_bob.newest + as_bob.matched}


def test_page_texts_for_reader_reads_newest_first_within_the_limit(vercel_world, bob):
    page = Page.objects.get(slug="vercel")
    everything = list(PageSection.objects.visible_to(bob).filter(page=page).order_by("-occurred_at", "-id"))
    texts = selectors.page_texts_for_reader(user=bob, page_ids=[page.pk, 10**9], limit=1)
    assert set(texts) == {page.pk}  # a page that does not exist is simply missing
    assert [s.id for s in texts[page.pk].newest] == [everything[0].pk]
    newest = texts[page.pk].newest[0]
    assert newest.sources == everything[0].sources
    assert (newest.occurred_at, newest.updated_at) == (everything[0].occurred_at, everything[0].updated_at)


def test_page_texts_for_reader_shows_a_persons_visible_activity(tenant, vercel_world, alice, bob):
    from wiki.services.people import directory_sync

    directory_sync(tenant=tenant)
    person = Page.objects.get(kind="person", slug="bob")
    as_bob = selectors.page_texts_for_reader(user=bob, page_ids=[person.pk], limit=50)[person.pk]
    as_alice = selectors.page_texts_for_reader(user=alice, page_ids=[person.pk], limit=50)[person.pk]
    assert any(SECRET in s.content for s in as_bob.newest)
    assert not any(SECRET in s.content for s in as_alice.newest)
    assert any("Finance" in s.content for s in as_alice.newest)


def _seen_by(user, slug: str) -> list[str]:
    return list(
        PageSection.objects.visible_to(user).filter(page__slug=slug).values_list("content", flat=True)
    )


def test_a_re_read_saying_the_channel_is_now_private_hides_it_at_once(tenant, push, alice, bob, charlie):
    from connectors.services.ingest import event_ingest

    everyone = ["alice@acme.com", "bob@acme.com", "charlie@acme.com"]
    push(slack("Zeta pricing 5%", ts="1.0", channel="CZ", tags={"customer": "Zeta"}, members=everyone))
    assert _seen_by(charlie, "zeta")
    # A poller reads the same message again: the channel is private now, charlie left it.
    again = slack("Zeta pricing 5%", ts="1.0", channel="CZ", tags={"customer": "Zeta"}, public=False,
                  members=everyone[:2])  # fmt: skip
    _, created = event_ingest(tenant=tenant, payload=again, members_observed_at=timezone.now())
    assert not created  # a duplicate: nothing to compile, yet the container changed
    assert _seen_by(charlie, "zeta") == [] and _seen_by(alice, "zeta")


def test_the_wiki_does_not_depend_on_the_order_events_arrive_in(tenant, push, alice, charlie):
    newer_private = slack("Iota new private note", ts="2.0", channel="CI", tags={"customer": "Iota"}, public=False,
                          members=["alice@acme.com"], minutes=10)  # fmt: skip
    older_public = slack("Iota old public note", ts="1.0", channel="CI", tags={"customer": "Iota"}, minutes=0)
    push(newer_private)
    push(older_public)  # arrives late: the channel's newest event says private
    assert _seen_by(charlie, "iota") == []
    assert len(_seen_by(alice, "iota")) == 2


def test_a_private_turn_hides_the_event_s_own_thread_before_any_compile(tenant, push, alice, charlie):
    from connectors.services.ingest import event_ingest

    push(slack("Eta pricing 5%", ts="3.0", channel="CE", tags={"customer": "Eta"}))
    assert _seen_by(charlie, "eta")
    reply = slack("reply: now private", ts="3.1", thread="3.0", channel="CE", public=False,
                  members=["alice@acme.com"], minutes=1)  # fmt: skip
    event_ingest(tenant=tenant, payload=reply)  # stored; no worker has compiled it yet
    assert _seen_by(charlie, "eta") == []
    assert _seen_by(alice, "eta")


def test_a_customer_named_only_in_a_private_channel_is_not_matched_in_public_text(push, alice, bob, charlie):
    secret = slack("Board approved acquiring them for $40M", ts="5.0", channel="CP", public=False,
                   members=["bob@acme.com"], author="bob@acme.com", tags={"customer": "Nightingale Holdings"})  # fmt: skip
    push(secret)
    push(slack("Saw a nightingale on the way in today", ts="6.0", channel="CG", minutes=5))
    titles = {p.title for p in selectors.page_list(user=charlie)}
    assert "Nightingale Holdings" not in titles
    assert "Nightingale Holdings" in {p.title for p in selectors.page_list(user=bob)}
    # Inside the channel that named it, its text still lands on its page.
    push(slack("Nightingale due diligence starts Monday", ts="7.0", channel="CP", public=False,
               members=["bob@acme.com"], author="bob@acme.com", minutes=6))  # fmt: skip
    assert len(_seen_by(bob, "nightingale")) == 2
    # Once a public event names it, public text finds it too.
    push(
        slack(
            "Nightingale Holdings announced the deal",
            ts="8.0",
            channel="CG",
            tags={"customer": "Nightingale Holdings"},
            minutes=7,
        )
    )
    push(slack("Nightingale deal lunch at noon", ts="9.0", channel="CG", minutes=8))
    assert any("lunch at noon" in text for text in _seen_by(charlie, "nightingale"))


def test_an_item_moved_to_another_thread_and_channel_leaves_the_old_one(push, alice, bob, charlie):
    push(slack("Secret pricing for Delta", ts="10.0", channel="CD1", tags={"customer": "Delta"}))
    moved = slack("Secret pricing for Delta, revised", ts="10.0", channel="CD1", kind="message_changed", version=2,
                  minutes=1, tags={"customer": "Delta"}, public=False, members=["bob@acme.com"])  # fmt: skip
    moved["container"]["key"] = "slack:channel:CD2"
    moved["thread_key"] = "slack:thread:CD2/10.0"
    push(moved)
    assert _seen_by(charlie, "delta") == []  # the old public copy is gone
    (text,) = _seen_by(bob, "delta")  # one section, in its new channel and thread
    assert "revised" in text
    assert not PageSection.objects.filter(thread_key="slack:thread:CD1/10.0").exists()
    # A later reply in the old thread does not bring the moved item back there.
    push(
        slack(
            "reply in the old thread",
            ts="10.1",
            thread="10.0",
            channel="CD1",
            tags={"customer": "Delta"},
            minutes=2,
        )
    )
    assert all("Secret pricing" not in t for t in _seen_by(charlie, "delta"))


def test_after_an_upgrade_a_late_old_event_does_not_reopen_a_private_channel(push, alice, charlie):
    """Visibility recorded since the upgrade starts from the container's stored events, so the
    first event seen afterwards is compared with them, not taken as a change."""
    push(slack("Kappa old public note", ts="20.0", channel="CK", tags={"customer": "Kappa"}, minutes=0))
    push(slack("Kappa secret new", ts="21.0", channel="CK", tags={"customer": "Kappa"}, public=False,
               members=["alice@acme.com"], minutes=10))  # fmt: skip
    AccessGroup.objects.filter(key="slack:channel:CK").update(public=None, public_at=None)  # as upgraded
    push(slack("Kappa late public note", ts="19.0", channel="CK", tags={"customer": "Kappa"}, minutes=-5))
    assert _seen_by(charlie, "kappa") == []
    assert len(_seen_by(alice, "kappa")) == 3


def test_a_thread_across_containers_does_not_title_a_public_page_with_a_private_tag(push, bob, charlie):
    """Pushed events may share one thread key across containers: the public container's
    draft must not land on a page named only by the private one's tags."""
    secret = slack("Pangolin will be acquired for 2B", ts="20.0", channel="CSEC", public=False,
                   members=["bob@acme.com"], author="bob@acme.com", tags={"customer": "Pangolin Holdings"})  # fmt: skip
    board = slack("weekly board sync notes: nothing special", ts="21.0", channel="CPUB", minutes=1)
    secret["thread_key"] = board["thread_key"] = "hubspot:thread:shared"
    push(secret)
    push(board)
    assert "Pangolin Holdings" not in {p.title for p in selectors.page_list(user=charlie)}
    (page,) = [p for p in selectors.page_list(user=bob) if p.title == "Pangolin Holdings"]
    assert _seen_by(charlie, page.slug) == []
    (text,) = _seen_by(bob, page.slug)  # the private draft only, not the board's
    assert "acquired" in text and "board sync" not in text
