"""The MCP server at /mcp: JSON-RPC over Streamable HTTP, the agent key, the acting user, the
one access filter, and errors as MCP errors (docs/agents.md, MCP)."""

from __future__ import annotations

import itertools
import json

import pytest

from almanac.selectors import group_get
from almanac.services.keys import agentkey_create, agentkey_revoke
from almanac.services.tenancy import membership_remove
from memories.models import Memory

_ids = itertools.count(1)


class Mcp:
    def __init__(self, client, key: str | None):
        self.client = client
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}

    def post(self, message, **headers):
        return self.client.post(
            "/mcp",
            json.dumps(message),
            content_type="application/json",
            headers={**self.headers, "Accept": "application/json, text/event-stream", **headers},
        )

    def rpc(self, method: str, params: dict | None = None) -> dict:
        message = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message)
        assert response.status_code == 200, response.content
        assert response["Content-Type"].startswith("application/json")
        body = response.json()
        assert body["id"] == message["id"]
        return body

    def call(self, tool: str, **arguments) -> dict:
        body = self.rpc("tools/call", {"name": tool, "arguments": arguments})
        return body["result"]

    def ok(self, tool: str, **arguments) -> dict:
        result = self.call(tool, **arguments)
        assert not result.get("isError"), result
        return result["structuredContent"]

    def error(self, tool: str, **arguments) -> str:
        result = self.call(tool, **arguments)
        assert result["isError"] is True, result
        assert "Traceback" not in result["content"][0]["text"]
        return result["content"][0]["text"]


@pytest.fixture
def mcp(client, agent_key):
    return Mcp(client, agent_key)


def test_initialize_negotiates_a_handshake_revision(mcp, tenant):
    body = mcp.rpc(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    result = body["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "almanac"
    assert "tools" in result["capabilities"]
    older = mcp.rpc("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})
    assert older["result"]["protocolVersion"] == "2025-03-26"
    unknown = mcp.rpc("initialize", {"protocolVersion": "1999-01-01", "capabilities": {}})
    assert unknown["result"]["protocolVersion"] == "2025-11-25"
    initialized = mcp.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (initialized.status_code, initialized.content) == (202, b"")
    assert mcp.rpc("ping")["result"] == {}


def test_tools_list_has_a_schema_and_description_for_every_tool(mcp, tenant):
    tools = {tool["name"]: tool for tool in mcp.rpc("tools/list")["result"]["tools"]}
    expected = {"context", "search_memories", "remember", "forget", "wiki_search", "wiki_page"}
    expected |= {"session_start", "session_turn", "session_end", "skills_list", "skill_run"}
    assert expected == set(tools)
    for tool in tools.values():
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and "user" in schema["required"], tool["name"]
        assert len(tool["description"]) > 40
    assert {"task", "max_tokens", "session_id", "cursor"} <= set(
        tools["context"]["inputSchema"]["properties"]
    )
    assert tools["forget"]["annotations"]["destructiveHint"] is True
    assert tools["wiki_search"]["annotations"]["readOnlyHint"] is True


def test_context_tool_returns_the_prompt_and_a_cursor(mcp, company):
    result = mcp.call("context", user="alice", task="Draft the Vercel renewal proposal", max_tokens=3000)
    data = result["structuredContent"]
    assert data["prompt"].startswith("[Company knowledge]\n## Vercel")
    assert result["content"][0]["text"].startswith(data["prompt"])
    small = mcp.ok("context", user="alice", task="Draft the Vercel renewal proposal", max_tokens=60)
    assert small["next_cursor"]
    again = mcp.ok(
        "context", user="alice", task="Draft the Vercel renewal proposal", cursor=small["next_cursor"]
    )
    assert again["prompt"] != small["prompt"]


def test_remember_search_and_forget(mcp, company, alice):
    memory = mcp.ok("remember", user="alice", content="Alice takes her coffee black, no sugar.")
    assert memory["scope"] == "user" and memory["id"] > 0
    hits = mcp.ok("search_memories", user="alice", query="coffee black")["results"]
    assert hits[0]["memory"]["id"] == memory["id"]
    # bob cannot see alice's private memory, so he cannot delete it either
    assert mcp.error("forget", user="bob", memory_id=memory["id"]) == "memory not found"
    assert mcp.ok("forget", user="alice", memory_id=memory["id"]) == {"deleted": memory["id"]}
    assert not Memory.objects.filter(pk=memory["id"]).exists()
    assert mcp.error("forget", user="alice", memory_id=memory["id"]) == "memory not found"


def test_wiki_search_and_page(mcp, company):
    results = mcp.ok("wiki_search", user="alice", query="Vercel renewal")["results"]
    slug = results[0]["page"]["slug"]
    page = mcp.ok("wiki_page", user="alice", slug=slug)
    assert page["title"] == "Vercel" and page["sections"]
    assert mcp.error("wiki_page", user="alice", slug="no-such-page") == "page not found"


def test_a_session_through_its_tools(mcp, company):
    session = mcp.ok("session_start", user="alice", title="renewal")
    turn = mcp.ok("session_turn", user="alice", session_id=session["id"], role="user", content="Hello there")
    assert (turn["role"], turn["content"]) == ("user", "Hello there")
    assert mcp.error("session_turn", user="bob", session_id=session["id"], role="user", content="x") == (
        "session not found"
    )
    ended = mcp.ok("session_end", user="alice", session_id=session["id"])
    assert ended["status"] != "active"
    assert "ended" in mcp.error(
        "session_turn", user="alice", session_id=session["id"], role="user", content="x"
    )


def test_no_key_or_a_revoked_key_is_a_401_before_anything_else(client, tenant, alice):
    assert Mcp(client, None).post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 401
    assert Mcp(client, "not-a-key").post({"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
    key, secret = agentkey_create(tenant=tenant, name="soon-revoked")
    assert Mcp(client, secret).rpc("ping")["result"] == {}
    agentkey_revoke(key=key)
    refused = Mcp(client, secret).post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Bearer"
    assert client.get("/mcp").status_code == 401  # the key first, the method after


def test_another_tenants_user_is_not_found(mcp, company, mallory):
    assert mcp.error("context", user="mallory", task="Vercel renewal") == "user not found"
    assert mcp.error("search_memories", user="mallory@globex.com", query="x") == "user not found"


def test_a_key_that_may_not_act_for_users_is_refused(client, tenant, alice):
    _, secret = agentkey_create(tenant=tenant, name="push-only", can_act_for_users=False)
    assert (
        Mcp(client, secret).error("context", user="alice", task="x") == "this agent key may not act for users"
    )


def test_acl_through_mcp_private_memory_and_revoked_membership(mcp, company, bob):
    task = "Vercel discount and unpaid invoice"
    for user in ("alice", "charlie"):
        text = json.dumps(mcp.call("context", user=user, task=task), ensure_ascii=False)
        assert "BOB-PRIVATE-MEMORY" not in text and "FINANCE-ONLY-MARKER" not in text
        hits = mcp.ok("search_memories", user=user, query="unpaid invoice INV-2026-77")["results"]
        assert all("BOB-PRIVATE" not in hit["memory"]["content"] for hit in hits)
    assert "FINANCE-ONLY-MARKER" in mcp.ok("context", user="bob", task=task)["prompt"]
    membership_remove(user=bob, group=group_get(tenant=company, key="slack:channel:CFIN"))
    assert "FINANCE-ONLY-MARKER" not in json.dumps(mcp.call("context", user="bob", task=task))
    page = mcp.ok("wiki_page", user="bob", slug="vercel")
    assert "FINANCE-ONLY-MARKER" not in json.dumps(page)


def test_bad_arguments_are_tool_errors(mcp, company):
    assert mcp.error("context", task="x") == "invalid arguments: user: Field required"
    assert "max_tokens" in mcp.error("context", user="alice", task="x", max_tokens=0)
    assert "task must not be empty" in mcp.error("context", user="alice", task="   ")
    assert "extra" in mcp.error("remember", user="alice", content="x", colour="red").lower()
    assert "memory_id" in mcp.error("forget", user="alice", memory_id="one")
    assert "role" in mcp.error("session_turn", user="alice", session_id=1, role="boss", content="x")
    assert mcp.error("context", user="alice", task="x\u0000y").startswith("invalid arguments: task")


def test_protocol_errors_are_json_rpc_errors(mcp, tenant):
    unknown_tool = mcp.rpc("tools/call", {"name": "drop_tables", "arguments": {}})
    assert unknown_tool["error"]["code"] == -32602
    assert mcp.rpc("resources/list")["error"]["code"] == -32601
    assert mcp.rpc("tools/call", ["context"])["error"]["code"] == -32602
    batch = mcp.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600
    garbage = mcp.client.post("/mcp", "{not json", content_type="application/json", headers=mcp.headers)
    assert garbage.status_code == 400
    assert mcp.client.get("/mcp", headers=mcp.headers).status_code == 405
    assert mcp.client.delete("/mcp", headers=mcp.headers).status_code == 405
    wrong_version = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, **{"MCP-Protocol-Version": "0.1"})
    assert wrong_version.status_code == 400


def test_a_memory_written_through_mcp_is_the_users_own(mcp, company, alice, bob):
    memory = mcp.ok("remember", user="bob", content="Bob keeps the finance forecast in the blue folder.")
    assert Memory.objects.get(pk=memory["id"]).owner == bob
    text = json.dumps(mcp.ok("search_memories", user="alice", query="finance forecast blue folder"))
    assert "blue folder" not in text


def test_stdio_server_acts_for_its_one_user(company, agent_key, monkeypatch, capsys):
    import io

    from django.core.management import CommandError, call_command

    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "context", "arguments": {
            "task": "Vercel discount and unpaid invoice", "user": "bob"}}},
    ]  # fmt: skip
    monkeypatch.setenv("ALMANAC_API_KEY", agent_key)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(json.dumps(m) for m in lines) + "\n"))
    call_command("mcp", tenant="acme", user="alice")
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert all("user" not in t["inputSchema"]["properties"] for t in answers[1]["result"]["tools"])
    prompt = answers[2]["result"]["structuredContent"]["prompt"]
    assert "Met the Vercel CTO" in prompt  # alice's memory, though the call named bob
    assert "BOB-PRIVATE-MEMORY" not in prompt
    with pytest.raises(CommandError, match="tenant"):
        call_command("mcp", tenant="globex", user="alice")
    monkeypatch.delenv("ALMANAC_API_KEY")
    with pytest.raises(CommandError, match="ALMANAC_API_KEY"):
        call_command("mcp", tenant="acme", user="alice")


def test_the_keys_rate_limit_holds_on_mcp(client, tenant):
    _, secret = agentkey_create(tenant=tenant, name="tight-mcp", rate_limit="1/h")
    mcp = Mcp(client, secret)
    assert mcp.rpc("ping")["result"] == {}
    refused = mcp.post({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1


def test_the_skills_api_as_tools(mcp, company):
    listed = {skill["name"] for skill in mcp.ok("skills_list", user="alice")["skills"]}
    assert {"summarize", "weekly_report", "contract_clauses"} <= listed
    text = "Vercel renewal: contract value ¥120,000. The renewal is due next month. Lee signs."
    out = mcp.ok("skill_run", user="alice", name="summarize", input={"text": text, "max_tokens": 200})
    assert out["run_id"] and out["used_llm"] is False and out["output"]
    assert mcp.error("skill_run", user="alice", name="no_such_skill", input={}) == "no skill 'no_such_skill'"
    assert "input" in mcp.error("skill_run", user="alice", name="summarize", input={"colour": "red"})
