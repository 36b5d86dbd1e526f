"""The MCP tools: each validates its arguments with the API's input schema, calls the API's
own handler (so the one access filter and the same services decide) and returns what the
API would return, shaped by the API's output schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from ninja import Schema
from pydantic import ConfigDict, Field

from almanac.auth import acting_user, request_tenant
from context.schemas import ContextIn
from context.services import context_build
from memories import api as memories_api
from memories.schemas import (
    MemoryIn,
    MemoryOut,
    MemorySearchIn,
    MemorySearchOut,
    SessionIn,
    SessionOut,
    TurnIn,
    TurnOut,
)
from skills import api as skills_api
from skills.schemas import SkillListOut, SkillRunIn, SkillRunOut
from wiki import api as wiki_api
from wiki.schemas import PageDetailOut, WikiSearchIn, WikiSearchOut

USER = (
    "Who the call acts for: a user name of the key's tenant or an e-mail. Everything returned "
    "is what this user may see; everything written is written as this user."
)


def _user() -> Any:
    return Field(..., min_length=1, max_length=300, description=USER)


class ContextArgs(ContextIn):
    user: str = _user()
    task: str = Field(description="The task or question the agent is about to work on, in its own words.")
    max_tokens: int = Field(
        default_factory=lambda: settings.CONTEXT_DEFAULT_MAX_TOKENS,
        description="The prompt's token budget: it never grows past it.",
    )
    session_id: int | None = Field(
        None,
        ge=1,
        le=2**63 - 1,
        description="A session from session_start: its recent turns join the context.",
    )
    cursor: str | None = Field(
        None,
        max_length=20000,
        description="next_cursor of an earlier context call with the same task: returns what did not fit then.",
    )


class SearchArgs(MemorySearchIn):
    user: str = _user()


class RememberArgs(MemoryIn):
    user: str = _user()


class ForgetArgs(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str = _user()
    memory_id: int = Field(
        ge=1, le=2**63 - 1, description="The memory's id (from search_memories or remember)."
    )


class WikiSearchArgs(WikiSearchIn):
    user: str = _user()


class WikiPageArgs(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str = _user()
    slug: str = Field(min_length=1, max_length=300, description="The page's slug (from wiki_search).")


class SessionStartArgs(SessionIn):
    user: str = _user()


class SessionTurnArgs(TurnIn):
    user: str = _user()
    session_id: int = Field(ge=1, le=2**63 - 1, description="The session, from session_start.")


class SessionEndArgs(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str = _user()
    session_id: int = Field(ge=1, le=2**63 - 1, description="The session, from session_start.")


class SkillsListArgs(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str = _user()


class SkillRunArgs(SkillRunIn):
    user: str = _user()
    name: str = Field(min_length=1, max_length=100, description="The skill, as skills_list names it.")


def _dump(schema: type[Schema], value: Any) -> dict:
    return schema.model_validate(value).model_dump(mode="json", by_alias=False)


def run_context(request, args: ContextArgs) -> dict:
    user = acting_user(request, args.user)
    key = getattr(request, "agent_key", None)
    args = args.dict(exclude={"user"})
    return context_build(user=user, tenant=request_tenant(request), via="mcp", agent_key=key, **args)


def run_search(request, args: SearchArgs) -> dict:
    return _dump(MemorySearchOut, memories_api.search_memories(request, args))


def run_remember(request, args: RememberArgs) -> dict:
    status = memories_api.create_memory(request, args)
    return _dump(MemoryOut, status.value)


def run_forget(request, args: ForgetArgs) -> dict:
    memories_api.delete_memory(request, args.memory_id, args.user)
    return {"deleted": args.memory_id}


def run_wiki_search(request, args: WikiSearchArgs) -> dict:
    return _dump(WikiSearchOut, wiki_api.search_pages(request, args))


def run_wiki_page(request, args: WikiPageArgs) -> dict:
    return _dump(PageDetailOut, wiki_api.get_page(request, args.slug, args.user))


def run_session_start(request, args: SessionStartArgs) -> dict:
    return _dump(SessionOut, memories_api.create_session(request, args).value)


def run_session_turn(request, args: SessionTurnArgs) -> dict:
    return _dump(TurnOut, memories_api.add_turn(request, args.session_id, args).value)


def run_session_end(request, args: SessionEndArgs) -> dict:
    return _dump(SessionOut, memories_api.end_session(request, args.session_id, args).value)


def run_skills_list(request, args: SkillsListArgs) -> dict:
    return _dump(SkillListOut, skills_api.list_skills(request, args.user))


def run_skill(request, args: SkillRunArgs) -> dict:
    payload = SkillRunIn(user=args.user, input=args.input)
    return _dump(SkillRunOut, skills_api.run_skill(request, args.name, payload))


def context_text(result: dict) -> str:
    """The context call as the model reads it: the prompt, then what it should know about it."""
    lines = [result["prompt"]]
    for warning in result["warnings"]:
        lines.append(f"[{warning['code']}] {warning['detail']}")
    if result["next_cursor"]:
        lines.append(
            f"More ranked context did not fit: call context again with cursor={result['next_cursor']}"
        )
    return "\n\n".join(lines)


def json_text(result: dict) -> str:
    return json.dumps(result, ensure_ascii=False)


@dataclass(frozen=True)
class McpTool:
    name: str
    title: str
    description: str
    args: type[Schema]
    run: Callable[[Any, Any], dict]
    text: Callable[[dict], str] = json_text
    read_only: bool = True
    destructive: bool = False

    def definition(self) -> dict:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": schema,
            "annotations": {
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                "openWorldHint": False,
            },
        }


TOOLS = {
    tool.name: tool
    for tool in (
        McpTool(
            "context",
            "Context for a task",
            "The company knowledge and memories relevant to a task, fitted to a token budget, as one "
            "prompt to put before the task. Call it first for any task about the company, its customers, "
            "projects, people or the user's preferences. If the result says more did not fit, call again "
            "with the same task and its cursor for the next part.",
            ContextArgs,
            run_context,
            text=context_text,
        ),
        McpTool(
            "search_memories",
            "Search memories",
            "Search the memories the user may see (their own, their department's, project's and the "
            "company's) for a query; best first, with ids for forget.",
            SearchArgs,
            run_search,
        ),
        McpTool(
            "remember",
            "Remember",
            "Write a memory for the user: a fact, preference or decision worth keeping across sessions, "
            "in one self-contained sentence. scope 'user' (default) keeps it private; 'dept', 'project' "
            "or 'tenant' share it (scope_key names the department or project). A near-duplicate returns "
            "the existing memory with duplicate_of set.",
            RememberArgs,
            run_remember,
            read_only=False,
        ),
        McpTool(
            "forget",
            "Forget a memory",
            "Delete a memory by id. Only its owner (or a governor) may; others get an error.",
            ForgetArgs,
            run_forget,
            read_only=False,
            destructive=True,
        ),
        McpTool(
            "wiki_search",
            "Search the wiki",
            "Search the company wiki (pages about customers, projects, people and topics compiled from "
            "chat, tickets, code and documents) for a query; each page with its matching sections.",
            WikiSearchArgs,
            run_wiki_search,
        ),
        McpTool(
            "wiki_page",
            "Read a wiki page",
            "One wiki page with every section the user may see, its summary and sources.",
            WikiPageArgs,
            run_wiki_page,
        ),
        McpTool(
            "session_start",
            "Start a session",
            "Start a conversation session; pass its id to context (recent turns join the context), "
            "session_turn and session_end.",
            SessionStartArgs,
            run_session_start,
            read_only=False,
        ),
        McpTool(
            "session_turn",
            "Record a turn",
            "Record one turn (role user, assistant or tool) of the session's conversation.",
            SessionTurnArgs,
            run_session_turn,
            read_only=False,
        ),
        McpTool(
            "skills_list",
            "List skills",
            "The skills the user may run (e.g. weekly_report, summarize, contract_clauses), each with "
            "its description and the JSON schema of its input; run one with skill_run.",
            SkillsListArgs,
            run_skills_list,
        ),
        McpTool(
            "skill_run",
            "Run a skill",
            "Run one skill for the user on an input that matches the skill's input schema (from "
            "skills_list); returns its output. A skill reads only what the user may see, and a run "
            "through here keeps nothing.",
            SkillRunArgs,
            run_skill,
            read_only=False,
        ),
        McpTool(
            "session_end",
            "End a session",
            "End the session: the memories worth keeping are extracted from its turns in the background.",
            SessionEndArgs,
            run_session_end,
            read_only=False,
        ),
    )
}
