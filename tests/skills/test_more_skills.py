import json

import pytest

from almanac.search import count_tokens
from skills.builtin.compress import unique_items
from skills.builtin.preference_extract import PREFERENCE_PROMPT
from skills.models import Skill
from skills.services import skill_run, skill_sync_builtins

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


def test_preference_extract_offline_keeps_preferences_only(settings):
    settings.LLM_BASE_URL = ""
    text = "我喜欢靠窗的座位。\n我们上周五和 Acme 开会了。\nI never take calls after 6pm and I prefer email."
    out = skill_run(name="preference_extract", input={"text": text, "session_date": "2025-03-20"})
    assert [f["text"] for f in out["facts"]] == [
        "我喜欢靠窗的座位。",
        "I never take calls after 6pm and I prefer email.",
    ]
    assert {f["type"] for f in out["facts"]} == {"preference"}


def test_preference_extract_llm_drops_other_kinds(chat_server):
    reply = {
        "facts": [
            {"text": "I prefer tea.", "type": "preference", "importance": 0.6, "occurred_at": None},
            {"text": "We met Acme.", "type": "event", "importance": 0.5, "occurred_at": None},
        ]
    }
    chat_server.script = [json.dumps(reply)]
    out = skill_run(name="preference_extract", input={"text": "I prefer tea. We met Acme."})
    assert [f["text"] for f in out["facts"]] == ["I prefer tea."]
    assert chat_server.requests[0]["messages"][0]["content"] == PREFERENCE_PROMPT
    assert "ONLY the preferences" in PREFERENCE_PROMPT and 'always "preference"' in PREFERENCE_PROMPT


def test_all_builtins_are_synced():
    skill_sync_builtins()
    assert set(Skill.objects.filter(builtin=True).values_list("name", flat=True)) == {
        "compress",
        "fact_extract",
        "preference_extract",
        "summarize",
    }
