"""JSON-RPC for MCP (the initialize-handshake revisions, newest first): initialize, ping,
tools/list and tools/call. Stateless: every message is answered on its own, so any web
process can take any request. Wire types are the `mcp` SDK's (mcp_types)."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from django.db import DataError, connection, transaction
from django.http import Http404
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from ninja.errors import HttpError
from pydantic import ValidationError

from almanac.errors import ApplicationError
from context.mcp.tools import TOOLS

log = logging.getLogger(__name__)

SERVER_INFO = types.Implementation(name="almanac", title="Almanac", version="1")
INSTRUCTIONS = (
    "Almanac holds a company's knowledge (a wiki compiled from its chat, tickets, code and "
    "documents) and its people's memories. Call `context` with the task before answering; "
    "every tool acts for the `user` it names and shows only what that user may see."
)


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def _dump(model) -> dict:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"result_type"})


def rpc_initialize(request, params: dict) -> dict:
    asked = params.get("protocolVersion")
    version = asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    result = types.InitializeResult(
        protocol_version=version,
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False)),
        server_info=SERVER_INFO,
        instructions=INSTRUCTIONS,
    )
    return _dump(result)


def rpc_ping(request, params: dict) -> dict:
    return {}


def rpc_tools_list(request, params: dict) -> dict:
    tools = [tool.definition() for tool in TOOLS.values()]
    if getattr(request, "mcp_user", None):  # a stdio server acts for one user: no `user` to give
        for tool in tools:
            schema = tool["inputSchema"]
            schema["properties"].pop("user")
            schema["required"].remove("user")
    return {"tools": tools}


def rpc_tools_call(request, params: dict) -> dict:
    name = params.get("name")
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        raise RpcError(types.INVALID_PARAMS, f"unknown tool: {name!r}")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        return _tool_error("arguments must be an object")
    if getattr(request, "mcp_user", None):
        arguments = {**arguments, "user": request.mcp_user}
    try:
        args = tool.args.model_validate(arguments)
        result = tool.run(request, args)
    except ValidationError as exc:
        return _tool_error("invalid arguments: " + _validation_message(exc))
    except (ApplicationError, HttpError, Http404, DataError) as exc:
        return _tool_error(_api_message(exc))
    except Exception:
        log.exception("MCP tool %s failed", tool.name)
        if connection.in_atomic_block:
            transaction.set_rollback(True)
        return _tool_error("the tool failed on the server; try again later")
    content = [types.TextContent(type="text", text=tool.text(result))]
    return _dump(types.CallToolResult(content=content, structured_content=result))


def _tool_error(message: str) -> dict:
    content = [types.TextContent(type="text", text=message)]
    return _dump(types.CallToolResult(content=content, is_error=True))


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _api_message(exc: Exception) -> str:
    """The message the API would answer with (config.api's error handlers)."""
    if isinstance(exc, ApplicationError):
        return exc.message
    if isinstance(exc, HttpError):
        return exc.message
    if isinstance(exc, Http404):
        return str(exc) or "not found"
    if connection.in_atomic_block:
        transaction.set_rollback(True)  # the refused statement aborted the enclosing transaction
    return "invalid value in the request: " + str(exc.__cause__ or exc).strip().splitlines()[0][:300]


METHODS = {
    "initialize": rpc_initialize,
    "ping": rpc_ping,
    "tools/list": rpc_tools_list,
    "tools/call": rpc_tools_call,
}


def rpc_answer(request, message: Any) -> dict | None:
    """The JSON-RPC response to one message; None for a notification or a client's response."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, types.INVALID_REQUEST, "expected one JSON-RPC 2.0 message (an object)")
    if "method" not in message:
        return None  # a response to a request of ours: we send none, so nothing to match
    msg_id = message.get("id")
    if "id" not in message:
        return None  # a notification (notifications/initialized, notifications/cancelled)
    if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
        return _error(None, types.INVALID_REQUEST, "id must be a string or an integer")
    method = METHODS.get(message["method"]) if isinstance(message["method"], str) else None
    if method is None:
        return _error(msg_id, types.METHOD_NOT_FOUND, f"method not found: {message['method']!r}")
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return _error(msg_id, types.INVALID_PARAMS, "params must be an object")
    try:
        return {"jsonrpc": "2.0", "id": msg_id, "result": method(request, params)}
    except RpcError as exc:
        return _error(msg_id, exc.code, exc.message)


def _error(msg_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
