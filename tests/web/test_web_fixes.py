"""Web UI defects found in review: unsafe source links, the preview's task limit, paging,
untranslated labels, logout, and search that ignored its own URL."""

import re
from unittest import mock

import pytest

from almanac.context import conf as context_conf
from connectors.services.ingest import event_ingest
from memories.services.memories import memory_create
from tests.web.test_web import login, private_event, public_event
from wiki.models import Page, PageSection

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


@pytest.fixture
def wiki(tenant, alice, bob, charlie, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(tenant=tenant, payload=private_event())
        event_ingest(tenant=tenant, payload=public_event())


def set_source_urls(url):
    PageSection.objects.update(source_list=[{"source": "slack", "url": url, "occurred_at": None}])


# 1. Source links


@pytest.mark.parametrize(
    "url", ["javascript:alert(document.cookie)", " JavaScript:alert(1)", "data:text/html,x"]
)
def test_a_source_url_that_is_not_http_is_shown_as_plain_text(client, wiki, charlie, url):
    set_source_urls(url)
    body = login(client, charlie).get("/wiki/vercel/").content.decode()
    assert "alert" not in body and "data:text" not in body
    assert "slack" in body


def test_an_http_source_url_is_a_link_that_does_not_leak_the_opener(client, wiki, charlie):
    set_source_urls("https://acme.slack.com/archives/CGEN/p1700000001000100")
    body = login(client, charlie).get("/wiki/vercel/").content.decode()
    assert (
        '<a href="https://acme.slack.com/archives/CGEN/p1700000001000100" rel="noopener noreferrer">' in body
    )


# 2. Context preview input


def test_the_preview_passes_a_long_task_whole_and_keeps_its_newlines(client, bob):
    task = "Vercel renewal\nsecond line " + "x" * 5000
    with mock.patch("almanac.context.services.context_build", side_effect=lambda **kw: None) as build:
        page = login(client, bob).post("/context/", {"task": task, "max_tokens": "800"})
    assert page.status_code == 200
    assert build.call_args.kwargs["task"] == task
    assert '<textarea name="task"' in page.content.decode()


def test_the_preview_refuses_a_task_over_the_api_limit_with_a_message(client, bob):
    task = "x" * (context_conf.TASK_MAX_CHARS + 1)
    with mock.patch("almanac.context.services.context_build") as build:
        body = login(client, bob).post("/context/", {"task": task}, **ZH).content.decode()
    build.assert_not_called()
    assert 'class="card warn"' in body and f"{context_conf.TASK_MAX_CHARS}" in body and "字符" in body


@pytest.mark.parametrize("max_tokens", ["abc", "0", "99999999"])
def test_a_bad_token_budget_is_refused_in_the_readers_language(client, bob, max_tokens):
    body = login(client, bob).get("/context/", {"task": "Vercel", "max_tokens": max_tokens}, **ZH)
    body = body.content.decode()
    assert "token 预算" in body and "max_tokens must be" not in body


# 3. Paging and empty states


@pytest.fixture
def five_memories(alice, monkeypatch):
    monkeypatch.setattr("almanac.views.PER_PAGE", 2)
    topics = ["pricing tiers", "legal review", "security questionnaire", "invoice dates", "kickoff agenda"]
    for topic in topics:
        memory_create(owner=alice, content=f"Renewal checklist: {topic}", memory_type="semantic")


def test_memories_are_paged_and_the_links_keep_the_filters(client, alice, five_memories):
    body = login(client, alice).get("/memories/", {"q": "renewal", "type": "semantic"}).content.decode()
    assert body.count('class="card" id="memory-') == 2
    assert 'href="?q=renewal&amp;type=semantic&amp;page=2"' in body
    last = client.get("/memories/", {"q": "renewal", "type": "semantic", "page": "3"}).content.decode()
    assert last.count('class="card" id="memory-') == 1
    assert 'href="?q=renewal&amp;type=semantic&amp;page=2"' in last


@pytest.mark.parametrize("page", ["abc", "0", "-1", "99999999999999999999", "\x00"])
def test_a_bad_page_number_is_not_an_error(client, alice, wiki, five_memories, page):
    login(client, alice)
    assert client.get("/memories/", {"page": page}).status_code == 200
    assert client.get("/wiki/", {"page": page}).status_code == 200


def test_wiki_list_is_paged_with_the_kind_kept(
    client, wiki, tenant, bob, monkeypatch, django_capture_on_commit_callbacks
):
    stripe = public_event()
    stripe.update(
        external_id="CGEN/1700000002.000100", text="Stripe asked for a demo.", tags={"customer": "Stripe"}
    )
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(tenant=tenant, payload=stripe)
    monkeypatch.setattr("almanac.views.PER_PAGE", 1)
    login(client, bob)
    first = client.get("/wiki/", {"kind": "customer"}).content.decode()
    second = client.get("/wiki/", {"kind": "customer", "page": "2"}).content.decode()
    shown = [re.findall(r'href="/wiki/([^/"]+)/"', body) for body in (first, second)]
    assert sorted(shown[0] + shown[1]) == ["stripe", "vercel"]
    assert 'href="?kind=customer&amp;page=2"' in first and 'href="?kind=customer&amp;page=1"' in second


def test_a_filter_that_matches_nothing_says_so(client, alice, wiki):
    login(client, alice)
    memories = client.get("/memories/", {"q": "zebra"}).content.decode()
    assert "Nothing matches" in memories and "No memories yet" not in memories
    assert "No memories yet" in client.get("/memories/").content.decode()
    pages = client.get("/wiki/", {"q": "zebra"}).content.decode()
    assert "Nothing matches" in pages and "No pages you can see yet" not in pages


# 4. Chinese labels and messages


def test_wiki_labels_are_translated(client, wiki, charlie):
    body = login(client, charlie).get("/wiki/", **ZH).content.decode()
    assert '<span class="tag">客户</span>' in body and '<span class="tag">customer</span>' not in body
    page = client.get("/wiki/vercel/", **ZH).content.decode()
    assert '<span class="tag">客户</span>' in page


def test_a_status_set_in_a_private_channel_shows_only_to_its_members(client, wiki, bob, charlie):
    Page.objects.update(status="closed", status_container="slack:channel:CFIN")
    login(client, bob)
    assert '<span class="tag">closed</span>' in client.get("/wiki/").content.decode()
    assert '<span class="tag">closed</span>' in client.get("/wiki/vercel/").content.decode()
    client.logout()
    login(client, charlie)
    for path in ("/wiki/", "/wiki/vercel/"):
        body = client.get(path).content.decode()
        assert "closed" not in body and '<span class="tag">active</span>' in body


def test_memory_labels_are_translated(client, alice):
    memory_create(owner=alice, content="I prefer one-page PDFs", memory_type="semantic")
    body = login(client, alice).get("/memories/", **ZH).content.decode()
    assert '<span class="tag">语义记忆</span>' in body and ">semantic<" not in body
    assert ">user<" not in body


def test_context_sources_show_a_translated_state_and_a_formatted_date(client, wiki, bob):
    body = login(client, bob).get("/context/", {"task": "Vercel renewal"}, **ZH).content.decode()
    sources = body.split("<h3>", 1)[1]
    assert "slack: 正常" in sources
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", sources)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", sources)


def test_refusing_a_delete_says_why_in_the_readers_language(client, alice, bob):
    memory, _ = memory_create(owner=alice, content="Apollo launch moved", scope="project", scope_key="Apollo")
    page = login(client, bob).post(f"/memories/{memory.pk}/delete", **ZH)
    assert page.status_code == 403
    assert "只有" in page.content.decode()


def test_a_user_without_a_tenant_is_told_in_chinese(client, db):
    from django.contrib.auth import get_user_model

    loner = get_user_model().objects.create_user(username="loner", password="x")
    body = login(client, loner).get("/context/", {"task": "Vercel"}, **ZH).content.decode()
    assert "租户" in body and "belongs to no tenant" not in body


# 5. Accounts


def test_logging_out_goes_home(client, alice):
    response = login(client, alice).post("/accounts/logout/")
    assert response.status_code == 302 and response.url == "/"


def test_password_reset_is_not_offered_without_a_mail_server(client, db):
    assert client.get("/accounts/password_reset/").status_code == 404


def test_password_change_uses_the_web_ui_layout(client, alice):
    body = login(client, alice).get("/accounts/password_change/").content.decode()
    assert 'name="new_password1"' in body and "Django administration" not in body
    assert 'href="/wiki/"' in body  # the web UI's navigation


def test_a_weak_new_password_is_refused_in_the_reader_s_language(client, alice):
    alice.set_password("old-secret-42")
    alice.save()
    login(client, alice)
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    for weak, said in (
        ("password", "这个密码太常见了"),
        ("x7-k", "密码太短"),
        ("1234567890", "密码只包含数字"),
    ):
        form = {"old_password": "old-secret-42", "new_password1": weak, "new_password2": weak}
        body = client.post("/accounts/password_change/", form, **zh).content.decode()
        assert said in body and "This password" not in body, weak
    alice.refresh_from_db()
    assert alice.check_password("old-secret-42")


# 6. Search URLs


def test_home_with_a_query_renders_the_results(client, wiki, bob):
    body = login(client, bob).get("/", {"q": "Vercel discount ceiling"}).content.decode()
    assert "18%" in body


def test_search_opened_directly_is_a_full_page(client, wiki, bob):
    response = login(client, bob).get("/search", {"q": "Vercel discount ceiling"})
    body = response.content.decode()
    assert "<html" in body and "18%" in body and 'value="Vercel discount ceiling"' in body
    assert "HX-Request" in response["Vary"]


def test_search_from_htmx_is_a_fragment_and_pushes_the_url(client, wiki, bob):
    login(client, bob)
    fragment = client.get(
        "/search", {"q": "Vercel discount ceiling"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and "18%" in fragment
    restore = client.get(
        "/search", {"q": "Vercel"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in restore.content.decode()
    assert 'hx-push-url="true"' in client.get("/").content.decode()


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
