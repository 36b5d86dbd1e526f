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


# --- On session.ended: preferences said in a session become memories -------------------


def _session(api, user, turns, django_capture_on_commit_callbacks):
    sid = api.post("/sessions", {"user": user}).json()["id"]
    for role, content in turns:
        assert (
            api.post(f"/sessions/{sid}/turns", {"user": user, "role": role, "content": content}).status_code
            == 201
        )
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(f"/sessions/{sid}/end", {"user": user}).status_code == 202
    return sid


def test_a_zh_session_preference_supersedes_the_older_one(
    api, alice, settings, django_capture_on_commit_callbacks
):
    from memories.models import Memory
    from memories.services.memories import memory_create
    from skills.models import SkillRun

    settings.LLM_BASE_URL = ""
    older = memory_create(owner=alice, content="以后报销都走纸质流程。", kind="preference")[0]
    turns = [("user", "以后报销都走电子流程"), ("assistant", "好的，以后出差都订高铁。")]
    sid = _session(api, "alice", turns, django_capture_on_commit_callbacks)
    run = SkillRun.objects.get(skill_name="preference_extract")
    assert run.trigger == "event:session.ended" and run.status == "success"
    new = Memory.objects.get(status="active", kind="preference", content__contains="电子流程")
    assert (new.scope, new.scope_key, new.owner) == ("user", "alice", alice)
    assert new.meta["session_id"] == sid
    older.refresh_from_db()
    assert older.status == "superseded" and older.superseded_by_id == new.pk
    assert not Memory.objects.filter(content__contains="高铁").exists()  # the assistant's words are not hers


def test_an_en_session_preference_in_its_scope(api, bob, settings, django_capture_on_commit_callbacks):
    from memories.models import Memory
    from memories.services.memories import memory_create

    settings.LLM_BASE_URL = ""
    older = memory_create(
        owner=bob, content="From now on, expense reports go through paper forms.", kind="preference"
    )[0]
    turns = [
        ("user", "from now on, always CC finance on vendor invoices"),
        ("user", "From now on, expense reports go through the online system."),
    ]
    _session(api, "bob", turns, django_capture_on_commit_callbacks)
    active = Memory.objects.filter(status="active", kind="preference", owner=bob)
    cc = active.get(content__icontains="CC finance")
    assert (cc.scope, cc.scope_key) == ("dept", "finance")  # names bob's own department
    online = active.get(content__contains="online system")
    older.refresh_from_db()
    assert older.status == "superseded" and older.superseded_by_id == online.pk
    assert active.filter(content__icontains="CC finance").count() == 1  # the extractor's copy is a duplicate


def test_redelivery_keeps_one_memory_per_preference(alice, settings):
    from memories.models import Memory
    from memories.services.sessions import session_create, session_end, turn_add
    from skills.tasks import skill_event_task

    settings.LLM_BASE_URL = ""
    session = session_create(user=alice)
    turn_add(session=session, role="user", content="以后出差都订高铁。")
    session_end(session=session)
    payload = {"session_id": session.pk}
    skill_event_task("preference_extract", "session.ended", payload, alice.profile.tenant_id, "key-pref")
    skill_event_task("preference_extract", "session.ended", payload, alice.profile.tenant_id, "key-pref")
    assert Memory.objects.filter(kind="preference", content__contains="高铁").count() == 1
