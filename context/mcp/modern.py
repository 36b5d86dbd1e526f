"""MCP's per-request revision (2026-07-28): no `initialize`, every request carries its own
envelope (`params._meta`: protocol version and client capabilities) and, over HTTP, routing
headers that must agree with it (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).

Served methods: `server/discover`, `tools/list`, `tools/call` — the same tools, arguments
and access filter as the handshake revisions. The envelope is checked by the SDK's own
classifier, requests and results by its per-revision wire types, so what is answered is
what the revision's schema says. This server sends no notifications, so there is nothing
to `subscriptions/listen` to: that method is answered "method not found".
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, InboundLadderRejection, classify_inbound_request
from mcp.shared.inbound import unsupported_protocol_version_rejection as version_rejection
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from context.mcp.protocol import INSTRUCTIONS, RpcError, rpc_tools_call, rpc_tools_list

# How long a client may keep the discovery answer and the tool list: they change only with a release.
DISCOVER_TTL_MS = 3_600_000
SUPPORTED_VERSIONS = [*MODERN_PROTOCOL_VERSIONS, *reversed(HANDSHAKE_PROTOCOL_VERSIONS)]


def is_modern(message: Any, header_version: str | None) -> bool:
    """Whether a message is answered at the per-request revision. Over HTTP the
    `MCP-Protocol-Version` header decides (any value the handshake revisions don't own, so
    an unknown one is told which are served); on stdio, a request's own envelope does."""
    if header_version is not None:
        return header_version not in HANDSHAKE_PROTOCOL_VERSIONS
    if not isinstance(message, dict) or message.get("method") == "initialize":
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and types.PROTOCOL_VERSION_META_KEY in meta


def modern_answer(request, message: Any, *, headers: dict[str, str] | None) -> tuple[int, dict | None]:
    """(HTTP status, JSON-RPC answer) for one message; no answer (202) for a notification.
    `headers` are the request's, keyed by lowercase name (None on stdio: no routing headers)."""
    if isinstance(message, dict) and "method" in message and "id" not in message:
        if headers is not None and (rejection := version_rejection(headers.get("mcp-protocol-version", ""))):
            return _rejection(None, rejection)
        return 202, None  # nothing to act on: this revision defines no client notifications here
    try:
        envelope = types.JSONRPCRequest.model_validate(message)
    except ValidationError:
        return 400, _error(None, types.INVALID_REQUEST, "expected one JSON-RPC 2.0 request (an object)")
    verdict = classify_inbound_request(message, headers=headers)
    if isinstance(verdict, InboundLadderRejection):
        return _rejection(envelope.id, verdict)
    handler = MODERN_METHODS.get(envelope.method)
    if handler is None:
        return 404, _error(envelope.id, types.METHOD_NOT_FOUND, _not_found(envelope.method))
    params = envelope.params or {}
    try:
        methods.validate_client_request(envelope.method, verdict.protocol_version, params)
        result = handler(request, params)
    except ValidationError as exc:
        message = "invalid params: " + "; ".join(error["msg"] for error in exc.errors(include_url=False))
        return 400, _error(envelope.id, types.INVALID_PARAMS, message)
    except RpcError as exc:
        return ERROR_CODE_HTTP_STATUS.get(exc.code, 200), _error(envelope.id, exc.code, exc.message)
    wire = methods.serialize_server_result(
        envelope.method, verdict.protocol_version, {**result, "resultType": "complete"}
    )
    return 200, {"jsonrpc": "2.0", "id": envelope.id, "result": wire}


def rpc_discover(request, params: dict) -> dict:
    return {
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": INSTRUCTIONS,
        "cacheScope": "public",  # the same for every key: no user's data in it
        "ttlMs": DISCOVER_TTL_MS,
    }


def rpc_tools_list_modern(request, params: dict) -> dict:
    # The list is the same for every key over HTTP; a stdio server's (no `user`) is its own.
    return {**rpc_tools_list(request, params), "cacheScope": "public", "ttlMs": DISCOVER_TTL_MS}


MODERN_METHODS = {
    "server/discover": rpc_discover,
    "tools/list": rpc_tools_list_modern,
    "tools/call": rpc_tools_call,
}


def _not_found(method: str) -> str:
    if method == "subscriptions/listen":
        return "this server sends no notifications: there is nothing to listen to"
    return f"method not found: {method!r}"


def _rejection(msg_id, rejection: InboundLadderRejection) -> tuple[int, dict]:
    body = _error(msg_id, rejection.code, rejection.message)
    if rejection.data is not None:
        body["error"]["data"] = rejection.data
    return ERROR_CODE_HTTP_STATUS.get(rejection.code, 400), body


def _error(msg_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
