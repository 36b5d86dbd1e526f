"""`manage.py agent_run --user U "task"`: the reference agent loop (almanac_client.agent) for one
task: Almanac's context, the configured chat model (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY) with
the tools more_context and remember, the session's turns written and the session ended.
The agent key comes from the environment (ALMANAC_API_KEY), never the command line. Without
`--url` the loop calls this installation in-process; with it, a server over HTTP."""

from __future__ import annotations

import os

import httpx
from almanac_client import AlmanacError, Client
from almanac_client.agent import ChatModel, run_agent
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Answer one task with the reference agent loop (Almanac context + the configured LLM)."

    def add_arguments(self, parser):
        parser.add_argument("task", nargs="+", help="what the agent is asked to do")
        parser.add_argument("--user", required=True, help="the user the agent acts for (username or e-mail)")
        parser.add_argument(
            "--url", default="", help="an Almanac server (default: this installation, in-process)"
        )
        parser.add_argument("--max-tokens", type=int, default=3000, help="the context budget per pass")
        parser.add_argument("--max-steps", type=int, default=6, help="model calls at most")

    def handle(self, task, user, url, max_tokens, max_steps, **options):
        key = os.environ.get("ALMANAC_API_KEY", "")
        if not key:
            raise CommandError("set ALMANAC_API_KEY to an agent key of the user's tenant")
        if not settings.LLM_BASE_URL or not settings.LLM_MODEL:
            raise CommandError("set LLM_BASE_URL and LLM_MODEL to an OpenAI-compatible chat API")
        model = ChatModel(settings.LLM_BASE_URL, settings.LLM_MODEL, api_key=settings.LLM_API_KEY or "")
        try:
            with _client(url, key, user) as almanac:
                result = run_agent(almanac, model, " ".join(task), max_tokens=max_tokens, max_steps=max_steps)
        except AlmanacError as error:
            raise CommandError(f"Almanac answered {error.status}: {error.detail}") from error
        except httpx.HTTPError as error:
            raise CommandError(f"the chat model failed: {error}") from error
        finally:
            model.close()
        self.stdout.write(result.answer)
        tools = ", ".join(result.tool_calls) or "none"
        self.stderr.write(f"session {result.session_id}: {result.passes} context pass(es), tools: {tools}")


def _client(url: str, key: str, user: str) -> Client:
    if url:
        return Client(url, key, user=user, timeout=settings.LLM_TIMEOUT)
    from django.core.wsgi import get_wsgi_application

    transport = httpx.WSGITransport(app=get_wsgi_application())
    host = next((h for h in settings.ALLOWED_HOSTS if h != "*" and not h.startswith(".")), "localhost")
    return Client(f"http://{host}", key, user=user, transport=transport)
