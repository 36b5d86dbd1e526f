import pytest
from cryptography.fernet import Fernet
from django.db import transaction

from connectors.admin import SourceAdmin
from connectors.demo import load
from connectors.models import Event, Source, SyncCursor
from connectors.services.sources import source_ensure, sync_failure

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, company):
    client.force_login(company.users["admin"])
    return client


def test_admin_lists_render(admin_client, company):
    load(company)
    sync_failure(source=Source.objects.get(name="slack"), error="HTTP 429 ratelimited", retry_after=60)
    page = admin_client.get("/admin/connectors/source/")
    assert page.status_code == 200 and b"backoff" in page.content and b"HTTP 429" in page.content
    for url in [
        "/admin/connectors/event/",
        "/admin/connectors/event/?kind__exact=email_recalled&q=Zephyr",
        "/admin/connectors/externalidentity/",
        "/admin/connectors/synccursor/",
    ]:
        assert admin_client.get(url).status_code == 200
    event = Event.objects.filter(kind="message_changed").first()
    detail = admin_client.get(f"/admin/connectors/event/{event.id}/change/")
    assert detail.status_code == 200 and b"v1 message" in detail.content


def test_admin_reset_backoff_action(admin_client, company):
    source = source_ensure(tenant=company.tenant, name="github", config={"repos": ["a/b"]})
    sync_failure(source=source, error="HTTP 503")
    response = admin_client.post(
        "/admin/connectors/source/", {"action": "reset_backoff", "_selected_action": [source.id]}, follow=True
    )
    assert (
        response.status_code == 200
        and "backoff reset for 1 of 1 source(s)" in response.content.decode().lower()
    )
    assert SyncCursor.objects.get(source=source).backoff_until is None
    idle = source_ensure(tenant=company.tenant, name="notes")
    response = admin_client.post(
        "/admin/connectors/source/",
        {"action": "reset_backoff", "_selected_action": [source.id, idle.id]},
        follow=True,
    )
    assert "backoff reset for 0 of 2 source(s)" in response.content.decode().lower()
    assert not SyncCursor.objects.filter(source=idle).exists()  # no empty cursor made


def test_admin_source_states_match_what_agents_are_told(admin_client, company):
    from connectors.selectors import source_freshness

    load(company)  # imported history: sources with events and no poll
    rows = admin_client.get("/admin/connectors/source/").context["cl"].result_list
    told = source_freshness(tenant=company.tenant)
    assert {s.name: SourceAdmin.sync_state(None, s) for s in rows} == {n: f["state"] for n, f in told.items()}
    assert any(f["state"] == "ok" for f in told.values())  # the demo history counts as synced


def test_admin_poll_now_action_polls(admin_client, company, tmp_path):
    (tmp_path / "n.md").write_text(
        "---\ntitle: Standup\nattendees: [carol@acme.example]\n---\nZephyr demo on Friday\n"
    )
    source = source_ensure(tenant=company.tenant, name="notes", config={"folder": str(tmp_path)})
    sync_failure(source=source, error="old failure", retry_after=3600)
    admin_client.post("/admin/connectors/source/", {"action": "poll_now", "_selected_action": [source.id]})
    assert Event.objects.filter(source=source, title="Standup").exists()  # forced past the backoff


def test_admin_credentials_are_write_only_and_encrypted(admin_client, company, settings):
    settings.CONNECTOR_SECRET_KEY = Fernet.generate_key().decode()
    source = source_ensure(tenant=company.tenant, name="slack")
    form = {
        "tenant": company.tenant.id,
        "kind": "slack",
        "name": "slack",
        "config": '{"team_id": "T1"}',
        "enabled": "on",
        "poll_minutes": 5,
        "new_credentials": "xoxb-very-secret",
        "cursor-TOTAL_FORMS": 0,
        "cursor-INITIAL_FORMS": 0,
        "cursor-MIN_NUM_FORMS": 0,
        "cursor-MAX_NUM_FORMS": 1,
    }
    response = admin_client.post(f"/admin/connectors/source/{source.id}/change/", form)
    assert response.status_code == 302, response.content[:2000]
    source.refresh_from_db()
    assert source.credentials.startswith("fernet:") and "xoxb" not in source.credentials
    page = admin_client.get(f"/admin/connectors/source/{source.id}/change/")
    assert b"xoxb-very-secret" not in page.content and source.credentials.encode() not in page.content


def test_hand_edited_admin_urls_are_a_400_not_a_500(admin_client, company):
    from memories.services.memories import memory_create

    load(company)
    memory_id = memory_create(owner=company.users["alice"], content="Alice prefers short answers.")[0].pk
    for url in [
        "/admin/connectors/event/?id__regex=(",
        "/admin/connectors/event/?kind__exact=%00",
        "/admin/memories/memory/?acl__contains=x",
        f"/admin/memories/memory/{memory_id}/history/abc/",
    ]:
        with transaction.atomic():  # a refused statement rolls back to here, as a request would
            assert admin_client.get(url).status_code in {400, 404}, url
