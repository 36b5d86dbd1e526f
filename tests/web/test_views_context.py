"""The context preview (web.views.context.context_preview): the task and budget checks, sources, users
without a tenant."""

import re
from unittest import mock

import pytest
from django.conf import settings

from memories.services.memories import memory_create
from tests.web.conftest import ZH, login

pytestmark = pytest.mark.django_db


def test_the_preview_passes_a_long_task_whole_and_keeps_its_newlines(client, bob):
    task = "Vercel renewal\nsecond line " + "x" * 5000
    with mock.patch("web.views.context.context_build", side_effect=lambda **kw: None) as build:
        page = login(client, bob).post("/context/", {"task": task, "max_tokens": "800"})
    assert page.status_code == 200
    assert build.call_args.kwargs["task"] == task
    assert '<textarea name="task"' in page.content.decode()


def test_the_preview_refuses_a_task_over_the_api_limit_with_a_message(client, bob):
    task = "x" * (settings.CONTEXT_TASK_MAX_CHARS + 1)
    with mock.patch("web.views.context.context_build") as build:
        body = login(client, bob).post("/context/", {"task": task}, **ZH).content.decode()
    build.assert_not_called()
    assert 'class="card warn"' in body and f"{settings.CONTEXT_TASK_MAX_CHARS}" in body and "字符" in body


@pytest.mark.parametrize("max_tokens", ["abc", "0", "99999999"])
def test_a_bad_token_budget_is_refused_in_the_readers_language(client, bob, max_tokens):
    body = login(client, bob).get("/context/", {"task": "Vercel", "max_tokens": max_tokens}, **ZH)
    body = body.content.decode()
    assert "token 预算" in body and "max_tokens must be" not in body


def test_context_sources_show_a_translated_state_and_a_formatted_date(client, wiki, bob):
    body = login(client, bob).get("/context/", {"task": "Vercel renewal"}, **ZH).content.decode()
    sources = body.split("<h3>", 1)[1]
    assert "slack: 正常" in sources
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", sources)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", sources)


def test_a_user_without_a_tenant_is_told_in_chinese(client, db):
    from django.contrib.auth import get_user_model

    loner = get_user_model().objects.create_user(username="loner", password="x")
    body = login(client, loner).get("/context/", {"task": "Vercel"}, **ZH).content.decode()
    assert "租户" in body and "belongs to no tenant" not in body


def _cards(body):
    return body.split('<article class="card context-item">')[1:]


def test_each_item_says_why_it_was_chosen_with_its_tokens_and_sources(client, wiki, bob):
    body = login(client, bob).post("/context/", {"task": "Vercel renewal discount"}).content.decode()
    vercel = next(card for card in _cards(body) if 'href="/wiki/vercel/"' in card)
    assert 'data-reason="entity"' in vercel and "Why: the task names it" in vercel
    assert re.search(r"\d+ tokens?", vercel) and "#finance-internal" in vercel
    zh = client.post("/context/", {"task": "Vercel renewal discount"}, **ZH).content.decode()
    assert "原因: 任务中提到了它" in zh and "个 token" in zh


def test_an_item_found_by_its_words_says_so(client, bob, alice):
    memory_create(
        owner=bob, content="The escrow agent for the data room is Ironclad Trust.", memory_type="semantic"
    )
    body = login(client, bob).post("/context/", {"task": "escrow agent data room"}).content.decode()
    card = next(card for card in _cards(body) if "Ironclad" in card)
    assert 'data-reason="keyword"' in card and "matches the task&#x27;s words" in card


def test_sources_are_in_plain_words_and_named_once(client, wiki, bob):
    memory_create(
        owner=bob,
        content="The escrow agent is Ironclad Trust.",
        memory_type="semantic",
        meta={"source": "session"},
    )
    login(client, bob)
    body = client.post("/context/", {"task": "Vercel escrow agent"}, **ZH).content.decode()
    memory = next(card for card in _cards(body) if "Ironclad" in card)
    assert '数据源: <span class="src">一次对话（会话）</span>' in memory and ">session<" not in memory
    vercel = next(card for card in _cards(body) if 'href="/wiki/vercel/"' in card)
    assert vercel.count("#finance-internal") == 1 and vercel.count("#general") == 1


def test_the_preview_names_access_groups_in_plain_words(client, wiki, bob):
    body = login(client, bob).get("/context/").content.decode()
    assert "Finance department" in body and "everyone at Acme" in body and "you" in body
    assert "dept:finance" not in body and "slack:channel:" not in body and "tenant:acme" not in body


def test_what_was_left_out_is_listed_with_why(client, wiki, bob):
    body = (
        login(client, bob).post("/context/", {"task": "Vercel renewal", "max_tokens": "5"}).content.decode()
    )
    left = body.split("Left out and why", 1)[1]
    assert 'class="card warn left-out" data-code="budget_exceeded"' in left and "Vercel" in left
    zh = client.post("/context/", {"task": "Vercel renewal", "max_tokens": "5"}, **ZH).content.decode()
    assert "未选入的内容及原因" in zh


def test_what_the_budget_left_out_is_said_in_plain_words(client, wiki, bob):
    memory_create(
        owner=bob, content="Vercel renewal: the escrow agent is Ironclad Trust.", memory_type="semantic"
    )
    login(client, bob)
    body = client.post("/context/", {"task": "Vercel renewal escrow", "max_tokens": "5"}).content.decode()
    (left,) = re.findall(
        r'<div class="card warn left-out" data-code="budget_exceeded">(.*?)</div>', body, re.S
    )
    assert left.startswith("Left out to stay within the token budget you chose: ")
    assert "Vercel" in left and "1 memory" in left
    assert "max_tokens" not in left and "semantic" not in left and "wiki:" not in left
    zh = client.post("/context/", {"task": "Vercel renewal escrow", "max_tokens": "5"}, **ZH).content.decode()
    (left,) = re.findall(r'<div class="card warn left-out" data-code="budget_exceeded">(.*?)</div>', zh, re.S)
    assert left.startswith("为控制在所选的 token 预算内而略去：") and "1 条记忆" in left and "、" in left
    assert "max_tokens" not in left and "语义" not in left


def test_the_api_answer_carries_no_reason(api, wiki, bob):
    answer = api.post("/context", {"user": "bob", "task": "Vercel renewal", "max_tokens": 800}).json()
    items = [item for block in answer["blocks"] for item in block["items"]]
    assert items and all("reason" not in item for item in items)


def test_a_chosen_pages_older_sections_left_out_are_said_so(client, wiki, bob, settings):
    settings.CONTEXT_PAGE_MAX_SECTIONS = 1
    login(client, bob)
    zh = client.post("/context/", {"task": "Vercel", "max_tokens": "800"}, **ZH).content.decode()
    (left,) = re.findall(r'<div class="card warn left-out" data-code="budget_exceeded">(.*?)</div>', zh, re.S)
    assert left == "为控制在所选的 token 预算内而略去：Vercel 的较早段落"
