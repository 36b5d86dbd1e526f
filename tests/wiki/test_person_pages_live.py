"""Person pages made by the compile of the events that name people, with no manual step:
titled with the name the source gives (Slack profile, e-mail From, calendar CN), the username
an alias; no page for an account that is no person; a customer's contacts on its page and on
pages of their own, known only to the readers of the sources that name them."""

import json
from email.message import EmailMessage

import pytest

from almanac.services.users import user_create
from connectors.calendar.normalize import ics_payloads
from connectors.email.normalize import message_payloads
from connectors.services.importer import ingest_all
from connectors.slack.importer import export_payloads
from wiki.models import Entity
from wiki.services.entities import entity_ensure
from wiki.services.people import directory_sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def maren(tenant):
    return user_create(tenant=tenant, username="maren", email="maren@acme.com", departments=["Sales"])


@pytest.fixture
def admin(tenant):
    user = user_create(tenant=tenant, username="admin", email="admin@acme.com")
    user.is_superuser = user.is_staff = True
    user.save(update_fields=["is_superuser", "is_staff"])
    return user


@pytest.fixture
def imported(django_capture_on_commit_callbacks, tenant):
    """Ingest an importer's payloads the way `import_*` does; the compile runs on commit."""

    def _import(payloads):
        with django_capture_on_commit_callbacks(execute=True):
            return ingest_all(tenant=tenant, payloads=payloads)

    return _import


def _slack_export(path, users, messages):
    (path / "users.json").write_text(json.dumps(users))
    (path / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general", "members": ["U1"]}]))
    (path / "general").mkdir()
    (path / "general" / "2026-11-30.json").write_text(json.dumps(messages))
    return path


def _titles(api, user):
    return {p["title"] for p in api.get("/wiki/pages", user=user, kind="person").json()}


def test_a_slack_import_makes_person_pages_titled_by_the_profile_name(
    api, tenant, maren, admin, charlie, imported, tmp_path
):
    deploy = user_create(tenant=tenant, username="deploy", email="deploy@acme.com")
    users = [
        {"id": "U1", "name": "maren", "profile": {"real_name": "Maren Solberg", "email": "maren@acme.com"}},
        {"id": "U2", "name": "admin", "profile": {"real_name": "Site Admin", "email": "admin@acme.com"}},
        # a bot with the e-mail of a service account someone made a user for
        {
            "id": "B1",
            "name": "deploybot",
            "is_bot": True,
            "profile": {"real_name": "Deploy Bot", "email": "deploy@acme.com"},
        },
    ]
    messages = [
        {
            "type": "message",
            "user": "U1",
            "text": "Kick-off notes are in the drive",
            "ts": "1764496800.000100",
        },
        {"type": "message", "user": "U2", "text": "Maintenance tonight", "ts": "1764496900.000100"},
        {"type": "message", "user": "B1", "text": "Deployed v2", "ts": "1764497000.000100"},
    ]
    imported(export_payloads(tenant=tenant, path=_slack_export(tmp_path, users, messages)))
    # No wiki_compile ran: the compile of the import's events made the pages.
    assert _titles(api, "charlie") == {"Maren Solberg"}
    entity = Entity.objects.get(kind="person", user=maren)
    assert entity.name == "Maren Solberg" and "maren" in entity.aliases
    assert not Entity.objects.filter(kind="person", user__in=[admin, deploy]).exists()
    page = api.get("/wiki/pages/maren-solberg", user="charlie").json()
    assert "Kick-off notes" in " ".join(s["content"] for s in page["sections"])


def test_a_page_titled_by_username_takes_the_source_name(api, tenant, maren, imported):
    directory_sync(tenant=tenant)
    assert Entity.objects.get(kind="person", user=maren).name == "maren"
    msg = _mail(sender="Maren Solberg <maren@acme.com>", to="bob@acme.com", body="Draft attached.")
    imported(message_payloads(tenant=tenant, source_name="email", msg=msg))
    assert Entity.objects.get(kind="person", user=maren).name == "Maren Solberg"
    directory_sync(tenant=tenant)  # the directory keeps the name a source gave
    assert _titles(api, "maren") == {"Maren Solberg"}


def test_no_person_page_for_a_superuser_or_an_admin_only_account(api, tenant, maren, admin, charlie):
    helpdesk = user_create(tenant=tenant, username="helpdesk", email="helpdesk@acme.com")
    helpdesk.is_staff = True  # staff, in no department and no project: an admin's account
    helpdesk.save(update_fields=["is_staff"])
    lead = user_create(tenant=tenant, username="lead", email="lead@acme.com", departments=["Sales"])
    lead.is_staff = True  # a tenant admin who is also an employee keeps their page
    lead.save(update_fields=["is_staff"])
    directory_sync(tenant=tenant)
    assert _titles(api, "charlie") == {"maren", "charlie", "lead"}
    admin.is_superuser = False
    admin.save(update_fields=["is_superuser"])
    directory_sync(tenant=tenant)
    assert "admin" not in _titles(api, "charlie")  # still staff and in nothing


def _mail(*, sender, to, body, subject="Globex renewal", msgid="<g1@globex.com>"):
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, to, subject, msgid
    msg["Date"] = "Mon, 30 Nov 2026 10:00:00 +0000"
    msg.set_content(body)
    return msg


def test_a_customer_contact_is_on_its_page_for_the_threads_readers_only(
    api, tenant, maren, charlie, imported
):
    entity_ensure(tenant=tenant, kind="customer", name="Globex")
    body = "Hi Maren,\n\nGlobex would like to renew for two years.\n\nBest,\nLena Berg\nHead of Procurement"
    msg = _mail(sender="Lena Berg <lena@globex.com>", to="maren@acme.com", body=body)
    imported(message_payloads(tenant=tenant, source_name="email", msg=msg))

    as_maren = " ".join(s["content"] for s in api.get("/wiki/pages/globex", user="maren").json()["sections"])
    assert "Contacts of Globex: Lena Berg, Head of Procurement (globex.com)" in as_maren
    contact = Entity.objects.get(kind="person", user=None)
    assert contact.name == "Lena Berg" and "lena@globex.com" in contact.aliases
    slug = contact.page.slug
    assert api.get(f"/wiki/pages/{slug}", user="maren").status_code == 200
    # charlie reads no source that names her: neither her line nor her page.
    assert api.get("/wiki/pages/globex", user="charlie").status_code == 404
    assert api.get(f"/wiki/pages/{slug}", user="charlie").status_code == 404
    assert "Lena Berg" not in _titles(api, "charlie")
    assert "Lena Berg" in _titles(api, "maren")
    assert not Entity.objects.filter(kind="person", name__icontains="maren", user=None).exists()


def test_meeting_attendees_are_named_by_their_cn(api, tenant, maren, imported):
    ics = "\r\n".join(
        [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//test//EN",
            "BEGIN:VEVENT",
            "UID:globex-qbr@acme.com",
            "DTSTART:20261210T100000Z",
            "SUMMARY:Quarterly review",
            "CATEGORIES:customer:Globex",
            "ORGANIZER;CN=Maren Solberg:mailto:maren@acme.com",
            "ATTENDEE;CN=Tom Ito:mailto:tom@globex.com",
            "ATTENDEE:mailto:noreply@globex.com",
            "END:VEVENT",
            "END:VCALENDAR",
            "",
        ]
    )
    imported(ics_payloads(tenant=tenant, data=ics.encode()))
    assert Entity.objects.get(kind="person", user=maren).name == "Maren Solberg"
    page = api.get("/wiki/pages/globex", user="maren").json()
    content = " ".join(s["content"] for s in page["sections"])
    assert (
        "Contacts of Globex: Tom Ito (globex.com)" in content
        and "noreply" not in content.split("Contacts")[1]
    )
    assert {"Maren Solberg", "Tom Ito"} <= _titles(api, "maren")


def test_a_user_made_superuser_or_deactivated_loses_their_page_at_once(api, tenant, maren, charlie):
    directory_sync(tenant=tenant)
    assert "maren" in _titles(api, "charlie")
    maren.is_superuser = True
    maren.save()  # as the admin's change form saves a user
    assert "maren" not in _titles(api, "charlie")
    assert not Entity.objects.filter(kind="person", user=maren).exists()
    charlie.last_login = None
    charlie.save(update_fields=["last_login"])  # a login changes nothing
    directory_sync(tenant=tenant)
    deactivated = Entity.objects.get(kind="person", user=charlie)
    charlie.is_active = False
    charlie.save(update_fields=["is_active"])
    assert not Entity.objects.filter(pk=deactivated.pk).exists()
