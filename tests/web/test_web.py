"""The employee web UI as a whole: it reads through the same access filter as the API,
pages and filters alike everywhere, and answers htmx requests whole."""

import pytest
from django.db import transaction

from almanac.selectors import user_group_keys
from memories.models import Memory
from memories.services.memories import memory_create
from tests.web.conftest import ZH, login

pytestmark = pytest.mark.django_db


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
    from almanac.services.tenancy import membership_remove

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
    assert "为控制在所选的 token 预算内而略去" in body and "为不超过 max_tokens" not in body
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
    from almanac.selectors import user_tenant
    from context.services import context_build

    memory_create(owner=bob, content="Vercel prefers quarterly invoices")
    touched = []
    # Where the context call counts what it returns (as an agent's call does).
    monkeypatch.setattr(
        "context.services.memory_touch_later", lambda *, memory_ids: touched.extend(memory_ids)
    )
    login(client, bob)
    assert client.get("/search", {"q": "Vercel invoices"}).status_code == 200
    assert client.get("/context/", {"task": "Vercel invoices", "max_tokens": 800}).status_code == 200
    assert touched == []
    context_build(user=bob, tenant=user_tenant(bob), task="Vercel invoices", max_tokens=800)
    assert touched  # the same call for an agent counts


@pytest.mark.parametrize("page", ["abc", "0", "-1", "99999999999999999999", "\x00"])
def test_a_bad_page_number_is_not_an_error(client, alice, wiki, five_memories, page):
    login(client, alice)
    assert client.get("/memories/", {"page": page}).status_code == 200
    assert client.get("/wiki/", {"page": page}).status_code == 200


def test_a_filter_that_matches_nothing_says_so(client, alice, wiki):
    login(client, alice)
    memories = client.get("/memories/", {"q": "zebra"}).content.decode()
    assert "Nothing matches" in memories and "No memories yet" not in memories
    assert "No memories yet" in client.get("/memories/").content.decode()
    pages = client.get("/wiki/", {"q": "zebra"}).content.decode()
    assert "Nothing matches" in pages and "No pages you can see yet" not in pages


def test_every_control_has_a_name_a_screen_reader_can_say(client, alice):
    from memories.services.memories import memory_create

    memory, _ = memory_create(owner=alice, content="Alice prefers aisle seats")
    login(client, alice)
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    memories = client.get("/memories/", **zh).content.decode()
    assert f'aria-label="删除记忆 #{memory.pk}"' in memories and 'aria-label="类型"' in memories
    assert 'aria-label="类别"' in client.get("/wiki/", **zh).content.decode()
    assert 'maxlength="500" aria-label="' in client.get("/search").content.decode()


def test_htmx_requests_of_an_expired_session_or_a_gone_memory_get_whole_answers(client, alice):
    from memories.services.memories import memory_create

    htmx = {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": "http://testserver/memories/?q=x"}
    search = client.get("/search", {"q": "Vercel"}, **htmx)  # not logged in
    assert (
        search.status_code == 200 and search["HX-Redirect"] == "/accounts/login/?next=%2Fmemories%2F%3Fq%3Dx"
    )
    memory, _ = memory_create(owner=alice, content="Alice prefers aisle seats")
    login(client, alice)
    assert client.post(f"/memories/{memory.pk}/delete", **htmx).status_code == 200
    gone = client.post(f"/memories/{memory.pk}/delete", **htmx, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert gone.status_code == 404 and "这条记忆已不存在" in gone.content.decode()
    assert "<html" not in gone.content.decode()  # a fragment for the card, not a page


@pytest.mark.parametrize(
    ("path", "title"),
    [("/wiki/", "知识库"), ("/memories/", "我的记忆"), ("/context/", "上下文预览"), ("/settings/", "设置"),
     ("/search?q=Vercel", "Vercel · 搜索")],
)  # fmt: skip
def test_each_page_names_itself_in_its_title(client, alice, path, title):
    body = login(client, alice).get(path, **ZH).content.decode()
    assert f"<title>{title} · Almanac</title>" in body
    assert '<link rel="icon" href="data:,">' in body  # no favicon request, and its 404, per page
