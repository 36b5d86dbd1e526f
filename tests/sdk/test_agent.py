"""The reference agent loop end to end: the live test server, and a local chat-completions
server speaking the real protocol, tool calls included (tests/skills/conftest.py)."""

from __future__ import annotations

import json

import pytest
from almanac_client.agent import ChatModel, run_agent
from django.core.management import CommandError, call_command

from memories.models import ConversationSession, Memory
from tests.skills.conftest import ChatServer

PREFERENCE = "Alice wants renewal proposals to lead with pricing."


def tool_call(name: str, arguments: dict, call_id: str) -> dict:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }
    choice = {"index": 0, "finish_reason": "tool_calls", "message": message}
    return {"body": json.dumps({"id": "chatcmpl-t", "object": "chat.completion", "choices": [choice]})}


@pytest.fixture
def chat():
    server = ChatServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def script_more_then_remember(chat):
    chat.script = [
        tool_call("more_context", {}, "call-1"),
        tool_call("remember", {"content": PREFERENCE}, "call-2"),
        "Draft: Vercel renewal at ¥120,000, pricing first.",
    ]


def test_the_loop_reads_a_second_pass_and_remembers(sdk, vercel, chat, alice):
    script_more_then_remember(chat)
    model = ChatModel(chat.url, "test-model", api_key="sk-test")
    result = run_agent(sdk, model, "Vercel renewal seats", max_tokens=1500)
    assert result.answer == "Draft: Vercel renewal at ¥120,000, pricing first."
    assert result.tool_calls == ["more_context", "remember"] and result.passes == 2
    first, second, third = chat.requests[:3]
    assert {t["function"]["name"] for t in first["tools"]} == {"more_context", "remember"}
    assert "[Company knowledge]\n## Vercel" in first["messages"][0]["content"]
    assert chat.headers[0]["Authorization"] == "Bearer sk-test"
    [more] = [m for m in second["messages"] if m["role"] == "tool"]
    assert more["tool_call_id"] == "call-1" and "renewal note" in more["content"]
    assert more["content"] not in first["messages"][0]["content"]
    assert "Remembered (memory" in third["messages"][-1]["content"]
    memory = Memory.objects.get(pk=result.memory_ids[0])
    assert memory.content == PREFERENCE and memory.owner == alice
    session = ConversationSession.objects.get(pk=result.session_id)
    assert session.ended_at is not None
    roles = list(session.turns.order_by("order").values_list("role", flat=True))
    assert roles == ["user", "tool", "tool", "assistant"]


def test_a_bad_tool_call_goes_back_to_the_model_as_an_error(sdk, alice, chat):
    chat.script = [tool_call("remember", {"content": 3}, "c1"), tool_call("delete_all", {}, "c2"), "Done."]
    result = run_agent(sdk, ChatModel(chat.url, "m"), "anything", max_steps=3)
    assert result.answer == "Done." and result.memory_ids == []
    errors = [m["content"] for m in chat.requests[2]["messages"] if m["role"] == "tool"]
    assert errors == ["error: remember needs a content string", "error: there is no tool 'delete_all'"]
    assert "tools" not in chat.requests[2]  # the last step may only answer


def test_agent_run_command(sdk, vercel, chat, live_server, agent_key, settings, monkeypatch, capsys):
    script_more_then_remember(chat)
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = chat.url, "test-model", ""
    settings.LLM_MAX_RETRIES, settings.LLM_BACKOFF = 0, 0.0  # the extraction at the end finds no script left
    monkeypatch.setenv("ALMANAC_API_KEY", agent_key)
    call_command(
        "agent_run", "Vercel", "renewal", "seats", user="alice", url=live_server.url, max_tokens=1500
    )
    out, err = capsys.readouterr()
    assert out.strip() == "Draft: Vercel renewal at ¥120,000, pricing first."
    assert "2 context pass(es), tools: more_context, remember" in err
    assert Memory.objects.filter(content=PREFERENCE).exists()
    chat.script = ["In-process answer."]  # without --url: this installation, in-process
    call_command("agent_run", "Vercel renewal", user="alice")
    assert capsys.readouterr().out.strip() == "In-process answer."
    monkeypatch.delenv("ALMANAC_API_KEY")
    with pytest.raises(CommandError, match="ALMANAC_API_KEY"):
        call_command("agent_run", "x", user="alice")
