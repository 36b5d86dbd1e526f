"""Working memory: window caps, compression points, tool-output truncation."""

import json

import pytest

from almanac.errors import ApplicationError
from memories import selectors, services
from memories.models import Turn
from memories.services.sessions import tool_output_truncate

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_window(settings):
    settings.WORKING_WINDOW_TURNS = 4
    settings.WORKING_WINDOW_TOKENS = 2000
    settings.WORKING_COMPRESS_EVERY = 5


def add(session, n, start=1, role="user"):
    for i in range(start, start + n):
        services.turn_add(session=session, role=role, content=f"turn {i}: we talked about topic number {i}")


def test_window_keeps_last_n_turns(alice, small_window):
    session = services.session_create(user=alice)
    add(session, 4)
    window = selectors.session_window(user=alice, session_id=session.pk)
    assert [t["content"][:6] for t in window["turns"]] == ["turn 1", "turn 2", "turn 3", "turn 4"]
    assert window["tokens"] == sum(t["tokens"] for t in window["turns"]) > 0
    assert window["session_id"] == session.pk


def test_compression_point_folds_older_turns(alice, small_window):
    session = services.session_create(user=alice)
    add(session, 4)
    assert not Turn.objects.filter(session=session, role="summary").exists()
    add(session, 1, start=5)  # the 5th turn is a compression point
    window = selectors.session_window(user=alice, session_id=session.pk)
    kinds = [t["kind"] for t in window["turns"]]
    assert kinds == ["summary", "turn", "turn", "turn", "turn"]
    assert "topic number 1" in window["turns"][0]["content"]
    assert [t["content"][:6] for t in window["turns"][1:]] == ["turn 2", "turn 3", "turn 4", "turn 5"]
    assert Turn.objects.get(session=session, order=1).folded


def test_later_compression_merges_the_previous_summary(alice, small_window):
    session = services.session_create(user=alice)
    add(session, 10)
    summaries = Turn.objects.filter(session=session, role="summary")
    assert summaries.count() == 2 and summaries.filter(folded=False).count() == 1
    window = selectors.session_window(user=alice, session_id=session.pk)
    assert [t["kind"] for t in window["turns"]].count("summary") == 1
    assert [t["content"][:7] for t in window["turns"][1:]] == ["turn 7:", "turn 8:", "turn 9:", "turn 10"]


def test_token_cap(alice, settings):
    settings.WORKING_WINDOW_TURNS = 20
    settings.WORKING_WINDOW_TOKENS = 40
    session = services.session_create(user=alice)
    add(session, 4)
    window = selectors.session_window(user=alice, session_id=session.pk)
    assert window["tokens"] <= 40
    assert 1 <= len(window["turns"]) < 4
    assert window["turns"][-1]["content"].startswith("turn 4")


def test_tool_output_json_list_truncated(alice):
    session = services.session_create(user=alice)
    rows = [{"id": i, "name": f"row {i}"} for i in range(60)]
    turn = services.turn_add(session=session, role="tool", content=json.dumps(rows))
    kept, more = turn.content.rsplit("\n", 1)
    assert len(json.loads(kept)) == 50 and json.loads(kept)[-1]["id"] == 49
    assert more == "… and 10 more"


def test_tool_output_lines_truncated_in_chinese(alice):
    session = services.session_create(user=alice)
    lines = "\n".join(f"订单 {i}：已发货" for i in range(73))
    turn = services.turn_add(session=session, role="tool", content=lines)
    assert turn.content.splitlines()[49] == "订单 49：已发货"
    assert turn.content.endswith("等 23 条")
    assert len(turn.content.splitlines()) == 51


def test_short_tool_output_and_user_turns_untouched(alice):
    session = services.session_create(user=alice)
    text = "\n".join(f"line {i}" for i in range(60))
    assert services.turn_add(session=session, role="user", content=text).content == text
    assert services.turn_add(session=session, role="tool", content='["a", "b"]').content == '["a", "b"]'


def test_ended_session_refuses_turns(alice):
    session = services.session_create(user=alice)
    services.session_end(session=session)
    with pytest.raises(ApplicationError) as err:
        services.turn_add(session=session, role="user", content="too late")
    assert err.value.status_code == 409


def test_summary_falls_back_offline_when_the_skill_fails(alice, small_window, monkeypatch):
    from memories.services import sessions

    def broken(**kwargs):
        from skills.services import SkillFailed

        raise SkillFailed("llm down")

    monkeypatch.setattr(sessions, "skill_run", broken)
    session = services.session_create(user=alice)
    add(session, 5)
    summary = Turn.objects.get(session=session, role="summary")
    assert "topic number 1" in summary.content


def test_a_tool_output_nested_too_deep_for_json_is_kept_as_text():
    deep = "[" * 5000 + "]" * 5000
    assert tool_output_truncate(deep) == deep


def test_a_deeply_nested_tool_output_is_kept_by_lines(api, alice):
    session = api.post("/sessions", {"user": "alice"}).json()
    depth = 895
    content = '{"a": ' + json.dumps([1] * 60) + ', "b": ' + "[" * depth + "]" * depth + "}"
    response = api.post(
        f"/sessions/{session['id']}/turns", {"user": "alice", "role": "tool", "content": content}
    )
    assert response.status_code == 201, response.content[:200]
    assert response.json()["content"] == content  # one line: nothing to cut


def test_tool_output_object_keeps_the_first_items_of_its_longest_list():
    rows = {"total": 120, "results": [{"id": i} for i in range(120)], "tags": ["a", "b"]}
    kept, more = tool_output_truncate(json.dumps(rows, indent=2)).rsplit("\n", 1)
    data = json.loads(kept)
    assert len(data["results"]) == 50 and data["results"][-1] == {"id": 49}
    assert data["total"] == 120 and data["tags"] == ["a", "b"] and more == "… and 70 more"


def test_tool_output_nested_object_and_chinese():
    rows = {"data": {"订单": [f"订单 {i}" for i in range(80)]}, "状态": "成功"}
    kept, more = tool_output_truncate(json.dumps(rows, ensure_ascii=False)).rsplit("\n", 1)
    assert json.loads(kept)["data"]["订单"][-1] == "订单 49" and more == "…等 30 条"


def test_tool_output_object_with_many_keys_and_short_objects():
    many = {f"k{i}": i for i in range(70)}
    kept, more = tool_output_truncate(json.dumps(many)).rsplit("\n", 1)
    assert list(json.loads(kept)) == [f"k{i}" for i in range(50)] and more == "… and 20 more"
    short = json.dumps({"results": list(range(10))}, indent=2)
    assert tool_output_truncate(short) == short
