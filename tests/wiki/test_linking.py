"""Entity linking across sources (wiki.services.threads.item_entities, wiki.matching): an
event that names a customer lands on its page whatever the source and wherever the name was
first seen, and linking never shows a name to a reader who could not read it."""

from wiki import selectors
from wiki.models import Entity, PageSection
from wiki.services.backlog import domains_learn_relink
from wiki.services.entities import entity_create, entity_update

from .conftest import at, slack


def _repo_issue(text, *, customer="Globex", number=1, members=("bob@acme.com",), minutes=0):
    """An issue of a private GitHub repo (bob only) tagged with a customer."""
    return {
        "source": "github",
        "external_id": f"acme/deals#{number}",
        "kind": "issue",
        "occurred_at": at(minutes),
        "container": {
            "key": "github:repo:acme/deals",
            "name": "acme/deals",
            "public": False,
            "members": list(members),
        },  # fmt: skip
        "thread_key": f"github:issue:acme/deals#{number}",
        "author": "bob@acme.com",
        "title": f"Deal desk #{number}",
        "text": text,
        "tags": {"customer": customer} if customer else {},
    }


def _mail(text, *, thread="g1", sender="alice@acme.com", to=("alice@acme.com", "dave@acme.com"), minutes=10,
          subject="Renewal"):  # fmt: skip
    """An e-mail of a private thread, no tags."""
    return {
        "source": "email",
        "external_id": f"<{thread}-{minutes}@mail>",
        "kind": "email",
        "occurred_at": at(minutes),
        "container": {
            "key": f"email:thread:{thread}",
            "name": subject,
            "public": False,
            "members": sorted({sender, *to}),
        },  # fmt: skip
        "thread_key": f"email:thread:{thread}",
        "author": sender,
        "title": subject,
        "text": text,
        "tags": {},
    }


def _titles(user) -> set[str]:
    return {p.title for p in selectors.page_list(user=user)}


def _texts(user, title: str) -> list[str]:
    return list(
        PageSection.objects.visible_to(user).filter(page__title=title).values_list("content", flat=True)
    )


def test_an_email_naming_a_customer_tagged_only_in_a_private_repo_lands_on_its_page(
    push, alice, bob, charlie
):
    push(_repo_issue("Globex wants a 3 year deal, floor $170k/yr"))
    push(_mail("Globex accepted the renewal offer at $172,000 per year"))
    # alice reads the e-mail: she sees the page, with the e-mail and not the repo's issue
    assert _texts(alice, "Globex") == [
        "[2026-11-30] alice@acme.com: Renewal: Globex accepted the renewal offer at $172,000 per year"
    ]
    # bob reads the repo, not the e-mail
    assert [t for t in _texts(bob, "Globex") if "floor" in t] and not [
        t for t in _texts(bob, "Globex") if "accepted" in t
    ]
    # charlie reads neither: no page, no title
    assert "Globex" not in _titles(charlie)


def test_a_public_thread_naming_a_privately_tagged_customer_moves_to_its_page(push, alice, bob, charlie):
    push(_repo_issue("Globex pricing, private"))
    push(slack("Globex asked about SSO again", channel="CC", name="#customers", minutes=5))
    # charlie read the name in the channel: he sees the page and only that section
    assert _texts(charlie, "Globex") == ["[2026-11-30] alice@acme.com: Globex asked about SSO again"]
    assert "#customers" not in _titles(charlie)


def test_a_name_without_its_legal_suffix_or_an_alias_does_not_reveal_a_private_page(
    push, tenant, bob, charlie
):
    push(_repo_issue("Acquisition target", customer="Nightingale Holdings"))
    entity = Entity.objects.get(tenant=tenant, name="Nightingale Holdings")
    assert entity.named_in == ["github:repo:acme/deals"]
    entity_update(entity=entity, aliases=["NTG"])
    push(slack("Saw a nightingale on the way in", channel="CG", name="#general", minutes=5))
    push(slack("NTG is a nice acronym", channel="CG", name="#general", minutes=6))
    assert "Nightingale Holdings" not in _titles(charlie)
    assert _texts(bob, "Nightingale Holdings") == [
        "[2026-11-30] bob@acme.com: Deal desk #1: Acquisition target"
    ]


def test_an_email_domain_alias_links_mail_from_that_company(push, tenant, alice):
    entity_create(tenant=tenant, kind="customer", name="Globex", aliases=["@globex.com"])
    push(_mail("Please find our signed order form attached", sender="hank@globex.com",
               to=("alice@acme.com",), subject="Order form"))  # fmt: skip
    assert _texts(alice, "Globex") == [
        "[2026-11-30] hank@globex.com: Order form: Please find our signed order form attached"
    ]


def test_a_ticket_prefix_alias_links_messages_about_its_tickets(push, tenant, charlie):
    entity_create(tenant=tenant, kind="customer", name="Globex", aliases=["GLX-"])
    push(slack("GLX-42 is fixed in the 5.2 release", channel="CS", name="#support"))
    assert _texts(charlie, "Globex") == ["[2026-11-30] alice@acme.com: GLX-42 is fixed in the 5.2 release"]


def test_chinese_mail_naming_a_privately_tagged_customer_lands_on_its_page(push, alice, charlie):
    push(_repo_issue("华为 续约底价 120 万", customer="华为"))
    push(_mail("华为 同意了三年续约，每年 125 万", subject="续约"))
    assert _texts(alice, "华为") == ["[2026-11-30] alice@acme.com: 续约: 华为 同意了三年续约，每年 125 万"]
    assert "华为" not in _titles(charlie)


def test_a_meeting_naming_no_customer_or_project_gets_the_meetings_page(push, alice, charlie):
    push(
        {
            "source": "calendar",
            "external_id": "uid-standup",
            "kind": "calendar_event",
            "occurred_at": at(0),
            "container": {
                "key": "calendar:event:uid-standup",
                "name": "Team standup",
                "public": False,
                "members": ["alice@acme.com"],
            },  # fmt: skip
            "thread_key": "calendar:event:uid-standup",
            "author": "alice@acme.com",
            "title": "Team standup",
            "text": "Daily standup",
            "tags": {},
        }
    )
    assert _texts(alice, "Meetings") == ["[2026-11-30] alice@acme.com: Team standup: Daily standup"]
    assert "Meetings" not in _titles(charlie)


def test_an_email_sent_before_its_customer_was_first_tagged_moves_to_its_page(push, alice, bob):
    push(_mail("Globex wants the invoice split in two", minutes=0))
    assert _texts(alice, "E-mail")
    push(_repo_issue("Globex account plan", minutes=30))
    assert _texts(alice, "E-mail") == []
    assert _texts(alice, "Globex") == [
        "[2026-11-30] alice@acme.com: Renewal: Globex wants the invoice split in two"
    ]


def test_an_email_domain_is_learned_from_mail_that_names_one_customer(push, tenant, alice, charlie):
    push(slack("Globex renewal is coming up", channel="CS", name="#sales", tags={"customer": "Globex"}))
    earlier = push(_mail("See you Tuesday", thread="c", sender="hank@globex.com", to=("alice@acme.com",)))
    push(_mail("Globex: order form signed", thread="a", sender="hank@globex.com", to=("alice@acme.com",)))
    assert set(
        PageSection.objects.filter(thread_key=earlier.thread_key).values_list("page__title", flat=True)
    ) == {"E-mail"}  # one thread naming Globex is not enough
    # The second one is: learned as it compiles (a live e-mail from outside), not at the sweep
    push(
        _mail("Globex wants a second workspace", thread="b", sender="sue@globex.com", to=("alice@acme.com",))
    )
    assert "@globex.com" in Entity.objects.get(name="Globex").aliases
    assert set(
        PageSection.objects.filter(thread_key=earlier.thread_key).values_list("page__title", flat=True)
    ) == {"Globex"}  # relinked
    later = push(_mail("Lunch?", thread="d", sender="hank@globex.com", to=("alice@acme.com",)))
    assert set(
        PageSection.objects.filter(thread_key=later.thread_key).values_list("page__title", flat=True)
    ) == {"Globex"}
    assert domains_learn_relink(tenant_id=tenant.pk) == []  # learned once


def test_no_domain_is_learned_from_mail_naming_two_customers_or_from_the_tenants_own(push, tenant, alice):
    entity_create(tenant=tenant, kind="customer", name="Initech")
    push(slack("Globex and Initech both renew", channel="CS", name="#sales", tags={"customer": "Globex"}))
    push(_mail("Globex: order form signed", thread="a", sender="hank@partner.com", to=("alice@acme.com",)))
    push(_mail("Initech: order form signed", thread="b", sender="ann@partner.com", to=("alice@acme.com",)))
    push(_mail("Globex call notes", thread="c", sender="alice@acme.com", to=("bob@acme.com",)))
    push(_mail("Globex follow-up", thread="d", sender="alice@acme.com", to=("bob@acme.com",)))
    assert domains_learn_relink(tenant_id=tenant.pk) == []
    assert not Entity.objects.filter(aliases__overlap=["@partner.com", "@acme.com"]).exists()
