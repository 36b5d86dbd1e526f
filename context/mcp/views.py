"""`/mcp`: MCP's Streamable HTTP transport in its JSON-response mode (docs/operations.md, MCP).

POST carries one JSON-RPC message and gets one `application/json` answer (202 and no body
for a notification), at the handshake revisions (`initialize` first, context/mcp/protocol.py)
or the per-request one (2026-07-28, context/mcp/modern.py) that `MCP-Protocol-Version` names. No server-sent-event stream is offered, so GET is a 405, and no
session is kept (no `Mcp-Session-Id`), so DELETE is one too. Every request needs an agent
key, checked before anything else is read; each tool call names the user it acts for.
"""

from __future__ import annotations

import json

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from almanac import selectors
from almanac.services.keys import agentkey_touch
from almanac.throttling import CallerRateThrottle
from context.mcp.modern import is_modern, modern_answer
from context.mcp.protocol import rpc_answer

_throttle = CallerRateThrottle()


def _refusal(status: int, message: str, **headers) -> JsonResponse:
    """An HTTP-level refusal, as a JSON-RPC error without an id (no message was read)."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    response = JsonResponse(body, status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def _agent_key(request):
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return selectors.agentkey_for_secret(token.strip())


@csrf_exempt
def mcp_endpoint(request):
    key = _agent_key(request)
    if key is None:
        return _refusal(401, "invalid or missing agent key", WWW_Authenticate="Bearer")
    if request.method != "POST":
        response = _refusal(405, "POST one JSON-RPC message; this server offers no event stream")
        response["Allow"] = "POST"
        return response
    agentkey_touch(key=key)
    request.agent_key = key
    if not _throttle.allow_request(request):
        wait = _throttle.wait() or 1
        return _refusal(429, "over the rate limit", Retry_After=str(max(1, round(wait))))
    try:
        message = json.loads(request.body)
    except RequestDataTooBig:
        return _refusal(413, "the request body is too large")
    except (ValueError, UnicodeDecodeError, RecursionError):
        message = None  # answered as the invalid request it is
    if is_modern(message, request.headers.get("MCP-Protocol-Version")):
        headers = {name.lower(): value for name, value in request.headers.items()}
        status, answer = modern_answer(request, message, headers=headers)
    else:
        answer = rpc_answer(request, message)
        # A message that could not be read (no id to answer to) is the request's fault: a 400.
        status = 400 if answer and "error" in answer and answer["id"] is None else 200
    if answer is None:
        return HttpResponse(status=202)
    return JsonResponse(answer, status=status, json_dumps_params={"ensure_ascii": False})
