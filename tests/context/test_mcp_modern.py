"""MCP's per-request revision (2026-07-28) at /mcp and on stdio (context/mcp/modern.py): no
handshake, the envelope and routing headers checked, the same tools and access filter as the
handshake revisions, and the SDK's own client negotiating it against a live server."""

from __future__ import annotations

import asyncio
import itertools
import json

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from almanac.services.keys import agentkey_revoke

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}
_ids = itertools.count(1)


def request(method: str, params: dict | None = None, *, meta: dict | None = ENVELOPE) -> dict:
    params = dict(params or {})
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


class Modern:
    def __init__(self, client, key: str | None):
        self.client = client
        self.auth = {"Authorization": f"Bearer {key}"} if key else {}

    def post(self, message: dict | list, **headers):
        method = message.get("method", "") if isinstance(message, dict) else ""
        routing = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if method == "tools/call":
            routing["Mcp-Name"] = message["params"].get("name", "")
        return self.client.post(
            "/mcp",
            json.dumps(message),
            content_type="application/json",
            headers={**self.auth, "Accept": "application/json, text/event-stream", **routing, **headers},
        )

    def result(self, method: str, params: dict | None = None) -> dict:
        message = request(method, params)
        response = self.post(message)
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["id"] == message["id"] and body["result"]["resultType"] == "complete"
        return body["result"]

    def call(self, tool: str, **arguments) -> dict:
        return self.result("tools/call", {"name": tool, "arguments": arguments})


@pytest.fixture
def modern(client, agent_key):
    return Modern(client, agent_key)


def test_discover_names_every_revision_served(modern, tenant):
    result = modern.result("server/discover")
    assert result["supportedVersions"][0] == MODERN
    assert {"2025-11-25", "2025-06-18", "2025-03-26"} <= set(result["supportedVersions"])
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["cacheScope"] == "public" and result["ttlMs"] > 0
    assert "context" in result["instructions"]


def test_tools_without_a_handshake_and_through_the_access_filter(modern, company):
    tools = modern.result("tools/list")
    assert tools["cacheScope"] == "public"
    assert {"context", "remember", "forget", "skill_run"} <= {tool["name"] for tool in tools["tools"]}
    alice = modern.call("context", user="alice", task="Draft the Vercel renewal proposal", max_tokens=3000)
    assert not alice.get("isError") and "Met the Vercel CTO" in alice["structuredContent"]["prompt"]
    bob = modern.call("context", user="bob", task="Draft the Vercel renewal proposal", max_tokens=3000)
    assert "Met the Vercel CTO" not in bob["structuredContent"]["prompt"]  # alice's own memory
    refused = modern.call("context", user="alice", task="x", max_tokens=0)
    assert refused["isError"] is True and "Traceback" not in refused["content"][0]["text"]


def test_the_envelope_and_routing_headers_are_checked(modern, tenant):
    no_meta = modern.post(request("tools/list", meta=None))
    assert no_meta.status_code == 400 and no_meta.json()["error"]["code"] == -32602
    wrong_method = modern.post(request("tools/list"), **{"Mcp-Method": "server/discover"})
    assert wrong_method.status_code == 400 and wrong_method.json()["error"]["code"] == -32020
    wrong_name = modern.post(
        request("tools/call", {"name": "context", "arguments": {}}), **{"Mcp-Name": "forget"}
    )
    assert wrong_name.json()["error"]["code"] == -32020
    body_version = request(
        "tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    )
    unknown = modern.post(body_version, **{"MCP-Protocol-Version": "2099-01-01"})
    assert unknown.status_code == 400
    assert unknown.json()["error"]["code"] == -32022
    assert MODERN in unknown.json()["error"]["data"]["supported"]


def test_handshake_methods_are_gone_and_unknown_ones_are_404(modern, tenant):
    initialize = modern.post(request("initialize", {"protocolVersion": MODERN, "capabilities": {}}))
    assert initialize.status_code == 404 and initialize.json()["error"]["code"] == -32601
    listen = modern.post(request("subscriptions/listen", {"notifications": {}}))
    assert listen.status_code == 404 and "nothing to listen to" in listen.json()["error"]["message"]
    unknown_tool = modern.post(request("tools/call", {"name": "drop_tables", "arguments": {}}))
    assert unknown_tool.status_code == 400 and unknown_tool.json()["error"]["code"] == -32602
    notification = modern.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    assert (notification.status_code, notification.content) == (202, b"")
    batch = modern.post([request("tools/list")])
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600


def test_the_key_is_checked_before_the_envelope(client, tenant, agent_key):
    assert Modern(client, None).post(request("tools/list", meta=None)).status_code == 401
    agentkey_revoke(key=tenant.agent_keys.get())
    assert Modern(client, agent_key).post(request("server/discover")).status_code == 401


def test_stdio_answers_a_request_carrying_its_own_envelope(company, agent_key, monkeypatch, capsys):
    import io

    from django.core.management import call_command

    lines = [
        request("tools/list"),
        request(
            "tools/call", {"name": "context", "arguments": {"task": "Vercel discount and unpaid invoice"}}
        ),
        request("tools/list", meta={"io.modelcontextprotocol/protocolVersion": MODERN}),  # no capabilities
    ]
    monkeypatch.setenv("ALMANAC_API_KEY", agent_key)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(json.dumps(m) for m in lines) + "\n"))
    call_command("mcp", tenant="acme", user="alice")
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert all("user" not in t["inputSchema"]["properties"] for t in answers[0]["result"]["tools"])
    assert "Met the Vercel CTO" in answers[1]["result"]["structuredContent"]["prompt"]
    assert answers[2]["error"]["code"] == -32602


@pytest.mark.django_db(transaction=True)
def test_the_sdk_client_negotiates_the_per_request_revision(live_server, company, agent_key):
    async def session(mode: str):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {agent_key}"}, timeout=30)
        transport = streamable_http_client(
            f"{live_server.url}/mcp", http_client=http, terminate_on_close=False
        )
        async with http, Client(transport, mode=mode, cache=None) as client:
            tools = await client.list_tools()
            called = await client.call_tool("context", {"user": "alice", "task": "Vercel renewal proposal"})
            return client.protocol_version, {t.name for t in tools.tools}, called

    for mode, version in (("auto", MODERN), ("legacy", "2025-11-25")):
        negotiated, names, called = asyncio.run(session(mode))
        assert negotiated == version
        assert {"context", "wiki_page", "session_end"} <= names
        assert not called.is_error and "Met the Vercel CTO" in called.structured_content["prompt"]
