"""The employee web UI reads through the same access filter as the API."""

import pytest
from django.db import transaction

from almanac.selectors import user_group_keys
from connectors.services.ingest import event_ingest
from memories.models import Memory
from memories.services.memories import memory_create

pytestmark = pytest.mark.django_db


def private_event(**over):
    event = {
        "source": "slack",
        "external_id": "CFIN/1700000000.000100",
        "version": 1,
        "kind": "message",
        "occurred_at": "2026-11-30T10:00:00Z",
        "container": {
            "key": "slack:channel:CFIN",
            "name": "#finance-internal",
            "members": ["bob@acme.com"],
            "public": False,
        },
        "thread_key": "slack:thread:CFIN/1700000000.000100",
        "author": "bob@acme.com",
        "text": "Vercel renewal: discount ceiling is 18%, approved by the CFO.",
        "tags": {"customer": "Vercel"},
    }
    event.update(over)
    return event


def public_event():
    return private_event(
        external_id="CGEN/1700000001.000100",
        container={"key": "slack:channel:CGEN", "name": "#general", "members": [], "public": True},
        thread_key="slack:thread:CGEN/1700000001.000100",
        text="Vercel kickoff call is on Friday with the platform team.",
    )


def login(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def wiki(tenant, alice, bob, charlie, django_capture_on_commit_callbacks):
    # ingest enqueues the compiler on commit; tasks run inline in tests
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(tenant=tenant, payload=private_event())
        event_ingest(tenant=tenant, payload=public_event())


def test_pages_need_a_login(client, wiki):
    assert client.get("/wiki/").status_code == 302
    assert client.get("/memories/").status_code == 302


def test_a_member_sees_the_private_section_and_a_non_member_does_not(client, wiki, bob, charlie):
    page = login(client, bob).get("/wiki/vercel/")
    assert page.status_code == 200
    assert "discount ceiling is 18%" in page.content.decode()
    client.logout()
    page = login(client, charlie).get("/wiki/vercel/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "kickoff call" in body and "discount ceiling" not in body


def test_search_results_respect_access_and_revocation(client, wiki, tenant, bob):
    login(client, bob)
    assert "18%" in client.get("/search", {"q": "Vercel discount ceiling"}).content.decode()
    from almanac.models import AccessGroup
    from almanac.services import membership_remove

    membership_remove(user=bob, group=AccessGroup.objects.get(tenant=tenant, key="slack:channel:CFIN"))
    assert "slack:channel:CFIN" not in user_group_keys(bob)
    assert "18%" not in client.get("/search", {"q": "Vercel discount ceiling"}).content.decode()


def test_wiki_list_in_chinese(client, wiki, charlie):
    login(client, charlie)
    body = client.get("/wiki/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "知识库" in body and "Vercel" in body


def test_own_memories_list_and_delete(client, alice, charlie):
    memory, _ = memory_create(owner=alice, content="I prefer renewal proposals as one-page PDFs")
    login(client, charlie)
    assert "one-page PDFs" not in client.get("/memories/").content.decode()
    assert client.post(f"/memories/{memory.pk}/delete").status_code == 404
    client.logout()
    login(client, alice)
    assert "one-page PDFs" in client.get("/memories/").content.decode()
    assert client.post(f"/memories/{memory.pk}/delete").status_code == 302
    assert not Memory.objects.filter(pk=memory.pk, status="active").exists()


def test_context_preview(client, wiki, bob):
    login(client, bob)
    body = client.get("/context/", {"task": "Vercel renewal discount", "max_tokens": 800}).content.decode()
    assert "[Company knowledge]" in body and "18%" in body


def test_context_preview_warnings_and_a_missing_page_in_chinese(client, wiki, bob):
    login(client, bob)
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    body = client.get(
        "/context/", {"task": "Vercel renewal discount", "max_tokens": 60}, **zh
    ).content.decode()
    assert "为不超过 max_tokens 而略去" in body and "left out to stay" not in body
    assert "已摘要 为放入预算已摘要" not in body and "over budget" not in body  # the detail says it once
    missing = client.get("/wiki/no-such-page/", **zh)
    assert missing.status_code == 404
    page = missing.content.decode()
    assert "没有这个页面，或者你无权查看。" in page and "知识库" in page  # the site's own page, translated
    api = client.get("/api/v1/no-such-path", **zh)
    assert api.status_code == 404 and api["Content-Type"] == "application/json"


def test_bad_values_in_the_web_ui_are_a_400_or_an_error_message_never_a_500(client, wiki, bob):
    login(client, bob)
    for path, params in [
        ("/wiki/", {"q": "\x00"}),
        ("/wiki/", {"kind": "\x00"}),
        ("/memories/", {"type": "\x00"}),
        ("/wiki/%00/", {}),
    ]:
        with transaction.atomic():  # a refused statement rolls back to here, as a request would
            assert client.get(path, params).status_code == 400, path
    confirm = client.post("/wiki/vercel/confirm", {"section_ids": ["²", "abc"]})
    assert confirm.status_code == 302  # nothing to confirm: back to the page
    for max_tokens in ["-1", "0", "99999999", "abc"]:
        page = client.get("/context/", {"task": "Vercel", "max_tokens": max_tokens})
        assert page.status_code == 200 and 'class="card warn"' in page.content.decode(), max_tokens


def test_context_preview_for_a_user_without_a_tenant_says_so(client, db):
    from django.contrib.auth import get_user_model

    loner = get_user_model().objects.create_user(username="loner", password="x")
    client.force_login(loner)
    page = client.get("/context/", {"task": "Vercel"})
    assert page.status_code == 200 and "belongs to no tenant" in page.content.decode()


def test_browsing_counts_no_memory_hits(client, wiki, bob, monkeypatch, django_capture_on_commit_callbacks):
    """Hit counts rank and keep memories for agents: a person searching or previewing is no
    agent recall (an agent's context call counts, the preview of the same call does not)."""
    from almanac.context.services import context_build
    from almanac.selectors import user_tenant
    from memories import services

    memory_create(owner=bob, content="Vercel prefers quarterly invoices")
    touched = []
    monkeypatch.setattr(services, "memory_touch_later", lambda *, memory_ids: touched.extend(memory_ids))
    login(client, bob)
    assert client.get("/search", {"q": "Vercel invoices"}).status_code == 200
    assert client.get("/context/", {"task": "Vercel invoices", "max_tokens": 800}).status_code == 200
    assert touched == []
    context_build(user=bob, tenant=user_tenant(bob), task="Vercel invoices", max_tokens=800)
    assert touched  # the same call for an agent counts
