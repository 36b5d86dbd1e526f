"""Working memory: window caps, compression points, tool-output truncation."""

import json

import pytest

from almanac.errors import ApplicationError
from almanac.search.tokens import count_tokens
from memories import selectors
from memories.models import Turn
from memories.services.sessions import session_create, session_end, tool_output_truncate, turn_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_window(settings):
    settings.WORKING_WINDOW_TURNS = 4
    settings.WORKING_WINDOW_TOKENS = 2000
    settings.WORKING_COMPRESS_EVERY = 5


def add(session, n, start=1, role="user"):
    for i in range(start, start + n):
        turn_add(session=session, role=role, content=f"turn {i}: we talked about topic number {i}")


def test_window_keeps_last_n_turns(alice, small_window):
    session = session_create(user=alice)
    add(session, 4)
    window = selectors.session_window(user=alice, session_id=session.pk)
    assert [t["content"][:6] for t in window["turns"]] == ["turn 1", "turn 2", "turn 3", "turn 4"]
    assert window["tokens"] == sum(t["tokens"] for t in window["turns"]) > 0
    assert window["session_id"] == session.pk


def test_compression_point_folds_what_will_leave_the_window(alice, small_window):
    session = session_create(user=alice)
    add(session, 4)
    assert not Turn.objects.filter(session=session, role="summary").exists()
    add(session, 1, start=5)  # the 5th turn is a compression point
    window = selectors.session_window(user=alice, session_id=session.pk)
    kinds = [t["kind"] for t in window["turns"]]
    # A window of 4 with a point every 5 turns keeps half of it: the next 2 turns fit.
    assert kinds == ["summary", "turn", "turn"]
    assert all(f"topic number {i}" in window["turns"][0]["content"] for i in (1, 2, 3))
    assert [t["content"][:6] for t in window["turns"][1:]] == ["turn 4", "turn 5"]
    assert Turn.objects.get(session=session, order=1).folded


def test_later_compression_merges_the_previous_summary(alice, small_window):
    session = session_create(user=alice)
    add(session, 10)
    summaries = Turn.objects.filter(session=session, role="summary")
    assert summaries.filter(folded=False).count() == 1
    window = selectors.session_window(user=alice, session_id=session.pk)
    assert [t["kind"] for t in window["turns"]].count("summary") == 1
    shown = [t["content"] for t in window["turns"][1:]]
    summary = window["turns"][0]["content"]
    for i in range(1, 11):
        assert f"topic number {i}" in summary or any(c.startswith(f"turn {i}:") for c in shown), i


def test_token_cap(alice, settings):
    settings.WORKING_WINDOW_TURNS = 20
    settings.WORKING_WINDOW_TOKENS = 40
    session = session_create(user=alice)
    add(session, 4)
    window = selectors.session_window(user=alice, session_id=session.pk)
    assert window["tokens"] <= 40
    assert 1 <= len(window["turns"]) < 4
    assert window["turns"][-1]["content"].startswith("turn 4")


def test_tool_output_json_list_truncated(alice):
    session = session_create(user=alice)
    rows = [{"id": i, "name": f"row {i}"} for i in range(60)]
    turn = turn_add(session=session, role="tool", content=json.dumps(rows))
    kept, more = turn.content.rsplit("\n", 1)
    assert len(json.loads(kept)) == 50 and json.loads(kept)[-1]["id"] == 49
    assert more == "… and 10 more"


def test_tool_output_lines_truncated_in_chinese(alice):
    session = session_create(user=alice)
    lines = "\n".join(f"订单 {i}：已发货" for i in range(73))
    turn = turn_add(session=session, role="tool", content=lines)
    assert turn.content.splitlines()[49] == "订单 49：已发货"
    assert turn.content.endswith("等 23 条")
    assert len(turn.content.splitlines()) == 51


def test_short_tool_output_and_user_turns_untouched(alice):
    session = session_create(user=alice)
    text = "\n".join(f"line {i}" for i in range(60))
    assert turn_add(session=session, role="user", content=text).content == text
    assert turn_add(session=session, role="tool", content='["a", "b"]').content == '["a", "b"]'


def test_ended_session_refuses_turns(alice):
    session = session_create(user=alice)
    session_end(session=session)
    with pytest.raises(ApplicationError) as err:
        turn_add(session=session, role="user", content="too late")
    assert err.value.status_code == 409


def test_summary_falls_back_offline_when_the_skill_fails(alice, small_window, monkeypatch):
    from memories.services import sessions

    def broken(**kwargs):
        from skills.services import SkillFailed

        raise SkillFailed("llm down")

    monkeypatch.setattr(sessions, "skill_run", broken)
    session = session_create(user=alice)
    add(session, 5)
    summary = Turn.objects.get(session=session, role="summary")
    assert "topic number 1" in summary.content and "topic number 3" in summary.content


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


# --- No gaps: every turn is in the window or in the summary, at every turn count ------------

# (role, text, what the summary must still say once the turn has left the window)
CONVERSATION = [
    ("user", "Hi there!", []),
    ("assistant", "Hello! How can I help you today?", []),
    ("user", "We are preparing the Acme renewal. The contract is worth $1.2M.", ["Acme", "$1.2M"]),
    ("assistant", "Got it. The Acme renewal is worth $1.2M. What is the deadline?", []),
    ("user", "The deadline is 2025-04-15 and Wang Wei owns the deal.", ["2025-04-15", "Wang Wei"]),
    ("assistant", "Thanks! I noted that Wang Wei owns it.", []),
    ("user", "Acme wants a 12% discount on the second year.", ["12%"]),
    ("assistant", "Sure, a 12% discount would bring year two to about $1.06M.", ["$1.06M"]),
    ("user", "我们决定最多给10%的折扣。", ["10%"]),
    ("assistant", "好的，明白了。", []),
    ("user", "Sounds good to me.", []),
    ("user", "合同金额确认为120万美元，付款分三期。", ["120万美元"]),
    ("assistant", "收到，我会记下付款分三期。", []),
    ("user", "The kickoff meeting is on March 28 with Priya from Acme.", ["March 28", "Priya"]),
    ("assistant", "Great, I have March 28 with Priya.", []),
    ("tool", '{"ticket": "PRD-2024-013", "status": "open"}', ["PRD-2024-013"]),
    ("assistant", "Ticket PRD-2024-013 is still open.", []),
    ("user", "Thanks, that's all for now.", []),
    ("user", "One more thing: legal review takes 5 business days.", ["5 business days"]),
    ("assistant", "Understood, 5 business days for legal.", []),
    ("user", "上周五我们和华为开了会，他们的预算是300万元。", ["300万元"]),
    ("assistant", "好的，华为预算300万元。", []),
    ("user", "Please draft an email to Priya about the 10% cap.", ["Priya"]),
    ("assistant", "Here is a draft: Dear Priya, we can offer at most 10% off year two. Best regards.", []),
    ("user", "Change the subject line to Renewal terms.", ["Renewal"]),
    ("assistant", "Done. The subject is now Renewal terms.", []),
    ("user", "Our CFO Maria Lopez must approve anything above $1M.", ["Maria Lopez", "$1M"]),
    ("assistant", "Noted: Maria Lopez approves above $1M.", []),
    ("user", "好的，谢谢", []),
    ("user", "Invoice INV-7781 was paid on 2025-03-02.", ["INV-7781", "2025-03-02"]),
    ("assistant", "Thanks, INV-7781 is marked as paid.", []),
    ("user", "下周三我要去深圳出差。", ["深圳"]),
    ("assistant", "祝出差顺利！", []),
    ("user", "The Berlin office opens in Q3 with 25 people.", ["Berlin", "25"]),
    ("assistant", "Good to know: Berlin, Q3, 25 people.", []),
    ("user", "Send the final deck to Tom Becker by Friday.", ["Tom Becker"]),
    ("assistant", "Will do.", []),
    ("user", "客户C的联系人是李娜，电话13800138000。", ["13800138000"]),
    ("assistant", "已记录李娜的电话。", []),
    ("user", "That's everything, bye!", []),
]


def must_keep(text: str) -> bool:
    return any(said == text and keys for _, said, keys in CONVERSATION)


def _covered(summary: str, shown: list[str], text: str, keys: list[str]) -> bool:
    return text in shown or all(key in summary for key in keys)


def test_every_turn_is_in_the_window_or_the_summary_at_every_turn_count(alice, settings):
    settings.WORKING_WINDOW_TURNS = 20
    settings.WORKING_WINDOW_TOKENS = 2000
    settings.WORKING_COMPRESS_EVERY = 5
    session = session_create(user=alice)
    for n, (role, text, _) in enumerate(CONVERSATION, start=1):
        turn_add(session=session, role=role, content=text)
        window = selectors.session_window(user=alice, session_id=session.pk)
        summaries = [t["content"] for t in window["turns"] if t["kind"] == "summary"]
        shown = [t["content"] for t in window["turns"] if t["kind"] == "turn"]
        summary = summaries[0] if summaries else ""
        for i, (_, said, must) in enumerate(CONVERSATION[:n], start=1):
            assert _covered(summary, shown, said, must), (n, i, said, summary)
        assert window["tokens"] <= settings.WORKING_WINDOW_TOKENS
        if summary:
            folded = Turn.objects.filter(session=session, folded=True).exclude(role="summary")
            assert count_tokens(summary) < sum(t.tokens for t in folded), (n, summary)
            assert count_tokens(summary) <= settings.WORKING_WINDOW_TOKENS // 4
            leaked = [t.content for t in folded if not must_keep(t.content) and t.content in summary]
            assert not leaked, (n, leaked, summary)
    assert summary and shown[0] == CONVERSATION[-len(shown)][1]


def test_the_first_summary_comes_before_any_turn_leaves(alice, settings):
    settings.WORKING_WINDOW_TURNS = 20
    settings.WORKING_COMPRESS_EVERY = 5
    session = session_create(user=alice)
    add(session, 20)
    window = selectors.session_window(user=alice, session_id=session.pk)
    assert window["turns"][0]["kind"] == "summary"  # at turn 20, not 25
    assert len(window["turns"]) == 17 and window["turns"][1]["content"].startswith("turn 5:")


def test_a_long_turn_folds_what_it_pushes_out_at_once(alice, settings):
    settings.WORKING_WINDOW_TURNS = 20
    settings.WORKING_WINDOW_TOKENS = 400
    settings.WORKING_COMPRESS_EVERY = 5
    session = session_create(user=alice)
    add(session, 6)
    turn_add(session=session, role="user", content="The Apollo budget is 42 thousand. " * 60)
    window = selectors.session_window(user=alice, session_id=session.pk)
    summary = window["turns"][0]["content"]
    assert window["turns"][0]["kind"] == "summary"
    shown = [t["content"] for t in window["turns"][1:]]
    for i in range(1, 7):
        assert f"topic number {i}" in summary or any(c.startswith(f"turn {i}:") for c in shown), i


def test_the_summary_drops_filler_and_what_the_assistant_repeats(alice, small_window):
    session = session_create(user=alice)
    for role, text in [
        ("user", "Hello!"),
        ("user", "Acme signed the contract for $300k."),
        ("assistant", "Great news! Acme signed for $300k. Anything else?"),
        ("user", "Thanks, that's all for now."),
        ("assistant", "You're welcome, have a nice day!"),
    ]:
        turn_add(session=session, role=role, content=text)
    summary = Turn.objects.get(session=session, role="summary").content
    assert summary == "user: Acme signed the contract for $300k."
