"""The LLM's standalone rewrite of a dialogue's latest turn (skills.rewrite) in recall: searched
as one more query form, asked in the dialogue's language, cached, bounded in time, and the
offline path unchanged without an LLM or when it fails."""

import json
import time

import pytest

from almanac.search.query import query_forms
from memories.selectors import memory_search
from memories.services.memories import memory_create
from skills import rewrite

pytestmark = pytest.mark.django_db

DIALOGUE_EN = "user: We met the Zanzibar Freight people on Monday.\nassistant: How did it go?\nuser: And when is it due?"
DIALOGUE_ZH = "用户：周一见了海鸥物流的人。\n助手：聊得怎么样？\n用户：那它什么时候到期？"


@pytest.fixture(autouse=True)
def _fresh_cache():
    rewrite._rewrite.cache_clear()
    rewrite._down_until[0] = 0.0
    yield
    rewrite._rewrite.cache_clear()
    rewrite._down_until[0] = 0.0


@pytest.fixture
def notes(alice):
    texts = [
        "The Zanzibar Freight contract renews on 2027-03-01.",
        "Lunch with the design team was fun.",
        "海鸥物流的合同2027年3月1日到期。",
    ]
    return [memory_create(owner=alice, content=t)[0] for t in texts]


def test_offline_the_forms_are_the_offline_ones(settings):
    settings.LLM_BASE_URL = ""
    assert query_forms(DIALOGUE_EN, rewrite=rewrite.standalone_query) == query_forms(DIALOGUE_EN)


def test_the_rewrite_is_searched_as_one_more_form(chat_server, alice, notes):
    chat_server.script = [json.dumps({"query": "When is the Zanzibar Freight contract renewal due?"})]
    forms = query_forms(DIALOGUE_EN, rewrite=rewrite.standalone_query)
    assert forms[:-1] == query_forms(DIALOGUE_EN)
    assert forms[-1] == "When is the Zanzibar Freight contract renewal due?"
    system = chat_server.requests[0]["messages"][0]["content"]
    assert "standalone search query" in system
    assert "Zanzibar" in chat_server.user_messages(0)[0]
    hits = memory_search(user=alice, query=DIALOGUE_EN, top_k=3)  # cached: no second request
    assert hits[0].memory.pk == notes[0].pk
    assert len(chat_server.requests) == 1


def test_a_chinese_dialogue_is_rewritten_in_chinese(chat_server, alice, notes):
    chat_server.script = [json.dumps({"query": "海鸥物流的合同什么时候到期"}, ensure_ascii=False)]
    hits = memory_search(user=alice, query=DIALOGUE_ZH, top_k=3)
    assert "用中文回答" in chat_server.requests[0]["messages"][0]["content"]
    assert hits[0].memory.pk == notes[2].pk


def test_a_single_question_is_not_rewritten(chat_server, alice, notes):
    memory_search(user=alice, query="When is the Zanzibar Freight renewal?", top_k=3)
    assert chat_server.requests == []


def test_a_slow_model_costs_one_timeout_then_is_paused(chat_server, settings, alice, notes):
    settings.SEARCH_REWRITE_TIMEOUT = 0.3
    chat_server.script = [{"sleep": 2.0, "content": json.dumps({"query": "too late"})}]
    started = time.monotonic()
    assert rewrite.standalone_query(DIALOGUE_EN) is None
    assert time.monotonic() - started < 1.5  # the timeout, not the server's 2 s
    slow = [h.memory.pk for h in memory_search(user=alice, query=DIALOGUE_ZH, top_k=3)]
    assert len(chat_server.requests) == 1  # paused after the failure: not asked again
    settings.LLM_BASE_URL = ""
    assert [h.memory.pk for h in memory_search(user=alice, query=DIALOGUE_ZH, top_k=3)] == slow


def test_a_failing_model_falls_back_to_the_offline_forms(chat_server, alice, notes):
    chat_server.script = [{"status": 500, "body": "down"}]
    started = time.monotonic()
    assert query_forms(DIALOGUE_EN, rewrite=rewrite.standalone_query) == query_forms(DIALOGUE_EN)
    assert time.monotonic() - started < 2.0
    rewrite._down_until[0] = 0.0  # the pause is over: a failure was not cached
    chat_server.script = [json.dumps({"query": "Zanzibar Freight renewal date"})]
    assert query_forms(DIALOGUE_EN, rewrite=rewrite.standalone_query)[-1] == "Zanzibar Freight renewal date"
