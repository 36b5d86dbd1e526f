"""`manage.py mcp --tenant T --user U`: the MCP server on stdin/stdout, for clients that start
their servers as local processes (docs/agents.md, MCP). The agent key comes from the
environment (ALMANAC_API_KEY), never the command line, and must belong to the tenant."""

from __future__ import annotations

import json
import os
import sys

from django.core.management.base import BaseCommand, CommandError
from django.http import HttpRequest

from almanac import selectors
from almanac.services.users import user_resolve
from context.mcp.modern import is_modern, modern_answer
from context.mcp.protocol import rpc_answer


class Command(BaseCommand):
    help = "Serve MCP over stdio (one JSON-RPC message a line) for one user of a tenant."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="the tenant's slug")
        parser.add_argument("--user", required=True, help="the user every tool call acts for")

    def handle(self, tenant, user, **options):
        request = stdio_request(secret=os.environ.get("ALMANAC_API_KEY", ""), tenant=tenant, user=user)
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                message = None  # answered as an invalid request
            if is_modern(message, None):  # a request carrying its own envelope (2026-07-28)
                _, answer = modern_answer(request, message, headers=None)
            else:
                answer = rpc_answer(request, message)
            if answer is not None:
                sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
                sys.stdout.flush()


def stdio_request(*, secret: str, tenant: str, user: str) -> HttpRequest:
    """A request as the HTTP server would build it for the key: the tools read the key and
    the acting user from it."""
    key = selectors.agentkey_for_secret(secret) if secret else None
    if key is None:
        raise CommandError("set ALMANAC_API_KEY to an agent key that is not revoked")
    if key.tenant.slug != tenant:
        raise CommandError(f"the agent key does not belong to tenant {tenant!r}")
    if user_resolve(tenant=key.tenant, ref=user) is None:
        raise CommandError(f"no user {user!r} in tenant {tenant!r}")
    request = HttpRequest()
    request.method = "POST"
    request.agent_key = key
    request.mcp_user = user
    return request
