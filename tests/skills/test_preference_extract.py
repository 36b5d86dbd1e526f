"""The preference_extract skill (skills.builtin.preference_extract): the fact extractor,
preferences only."""

import json

import pytest

from skills.builtin.preference_extract import PREFERENCE_PROMPT
from skills.services import skill_run

pytestmark = pytest.mark.django_db


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
