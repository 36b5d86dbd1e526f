"""Recall confirmation with authority: only the recalled message's sender, an admin or a
steward of its container may confirm it, with a reason, audited; the page lists the stale
section ids to those who may confirm them."""

import pytest
from django.contrib.auth.models import Permission

from almanac.models import AuditEvent
from tests.wiki.conftest import email
from wiki.models import PageSection, Steward

pytestmark = pytest.mark.django_db


@pytest.fixture
def recalled(push, alice, bob, charlie):
    """alice's e-mail to alice and bob about Vercel, recalled by alice."""
    push(email("List price is 40k"), email("Recall", kind="email_recalled", version=2, minutes=30))
    section = PageSection.objects.get(page__slug="vercel")
    assert section.stale
    return section


def _confirm(api, user, section, reason="the price was right after all"):
    body = {"user": user, "section_ids": [section.pk]}
    if reason is not None:
        body["reason"] = reason
    return api.post("/wiki/pages/vercel/confirm", body)


def _audit():
    return AuditEvent.objects.get(action="wiki.section_confirmed")


def test_the_sender_confirms_with_a_reason(api, recalled):
    response = _confirm(api, "alice", recalled)
    assert response.status_code == 200 and response.json()["confirmed"] == [recalled.pk]
    recalled.refresh_from_db()
    assert not recalled.stale
    audit = _audit()
    assert audit.actor == "alice" and audit.detail["role"] == "sender"
    assert audit.detail["reason"] == "the price was right after all"


def test_another_reader_of_the_thread_gets_403(api, recalled):
    response = _confirm(api, "bob", recalled)
    assert response.status_code == 403 and "sender" in response.json()["detail"]
    recalled.refresh_from_db()
    assert recalled.stale and not AuditEvent.objects.filter(action="wiki.section_confirmed").exists()


def test_a_reason_is_required(api, recalled):
    for reason in (None, "", "   "):
        assert _confirm(api, "alice", recalled, reason=reason).status_code == 422
    recalled.refresh_from_db()
    assert recalled.stale


def test_a_steward_of_the_container_confirms(api, recalled, bob, tenant):
    Steward.objects.create(tenant=tenant, user=bob, container_key="email:thread:t1")
    assert _confirm(api, "bob", recalled).status_code == 200
    assert _audit().detail["role"] == "steward"


def test_a_steward_of_a_prefix_confirms(api, recalled, bob, tenant):
    Steward.objects.create(tenant=tenant, user=bob, container_key="slack:*")
    assert _confirm(api, "bob", recalled).status_code == 403
    Steward.objects.create(tenant=tenant, user=bob, container_key="email:*")
    assert _confirm(api, "bob", recalled).status_code == 200


def test_an_admin_confirms(api, recalled, bob):
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    bob.user_permissions.add(Permission.objects.get(codename="change_pagesection"))
    assert _confirm(api, "bob", recalled).status_code == 200
    assert _audit().detail["role"] == "admin"


def test_someone_who_cannot_read_it_still_gets_404(api, recalled):
    assert _confirm(api, "charlie", recalled).status_code == 404


def test_the_page_lists_stale_ids_to_those_who_may_confirm(api, recalled, tenant, bob):
    assert api.get("/wiki/pages/vercel", user="alice").json()["stale_section_ids"] == [recalled.pk]
    bobs = api.get("/wiki/pages/vercel", user="bob").json()
    assert bobs["stale_section_ids"] == [] and bobs["stale_sections"] == 1
    Steward.objects.create(tenant=tenant, user=bob, container_key="email:thread:t1")
    assert api.get("/wiki/pages/vercel", user="bob").json()["stale_section_ids"] == [recalled.pk]


def test_the_web_ui_offers_and_checks_the_same(client, recalled, alice, bob):
    client.force_login(bob)
    assert f'value="{recalled.pk}"' not in client.get("/wiki/vercel/").content.decode()
    assert (
        client.post("/wiki/vercel/confirm", {"section_ids": [recalled.pk], "reason": "x"}).status_code == 403
    )
    client.force_login(alice)
    assert f'value="{recalled.pk}"' in client.get("/wiki/vercel/").content.decode()
    assert client.post("/wiki/vercel/confirm", {"section_ids": [recalled.pk]}).status_code == 422
    response = client.post("/wiki/vercel/confirm", {"section_ids": [recalled.pk], "reason": "it stands"})
    assert response.status_code == 302
    recalled.refresh_from_db()
    assert not recalled.stale
