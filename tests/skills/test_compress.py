"""The compress skill (skills.builtin.compress): duplicates dropped, the budget kept."""

import pytest

from almanac.search.tokens import count_tokens
from skills.builtin.compress import unique_items
from skills.services import skill_run

pytestmark = pytest.mark.django_db

MEMORIES = [
    "I prefer morning meetings.",
    "I prefer morning meetings",
    "Acme renewed the contract for $1.2M on 2025-03-12.",
    "Carol owns PRD-2024-013.",
    "我们项目组决定 4 月 1 日上线 Apollo。",
    "Carol owns PRD-2024-013 and the Zephyr migration.",
]


def test_unique_items_drops_duplicates_and_contained_items():
    assert unique_items(MEMORIES) == [
        "I prefer morning meetings.",
        "Acme renewed the contract for $1.2M on 2025-03-12.",
        "我们项目组决定 4 月 1 日上线 Apollo。",
        "Carol owns PRD-2024-013 and the Zephyr migration.",
    ]


def test_compress_offline_fits_and_keeps_the_facts(settings):
    settings.LLM_BASE_URL = ""
    out = skill_run(name="compress", input={"items": MEMORIES, "max_tokens": 200, "topic": "Acme"})
    summary = out["summary"]
    assert count_tokens(summary) <= 200
    assert summary.count("morning meetings") == 1 and "$1.2M" in summary and "4 月 1 日" in summary
    small = skill_run(name="compress", input={"items": MEMORIES, "max_tokens": 25})["summary"]
    assert count_tokens(small) <= 25 and small


def test_compress_llm_sends_numbered_unique_items(chat_server):
    chat_server.script = ['{"summary": "Carol owns PRD-2024-013; Acme renewed for $1.2M."}']
    out = skill_run(name="compress", input={"items": MEMORIES, "max_tokens": 50})
    assert out == {"summary": "Carol owns PRD-2024-013; Acme renewed for $1.2M."}
    user = chat_server.user_messages(0)[0]
    assert (
        user.startswith("1. I prefer morning meetings.\n2. Acme") and "4. Carol owns PRD-2024-013 and" in user
    )
