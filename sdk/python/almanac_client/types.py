"""The shapes of the API's answers (docs/api.md), for type checkers and editors.

At run time every result is the plain JSON dict the API sent; fields may be added by the
server, so these list the contract's fields and are not exhaustive (`total=False`)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

MemoryType = Literal["semantic", "episodic", "working"]
Scope = Literal["user", "dept", "project", "tenant"]
Role = Literal["user", "assistant", "tool"]
Signal = Literal["adopted", "ignored", "corrected"]


class Warning(TypedDict, total=False):
    code: str
    detail: str
    items: list[str]


class ContextItem(TypedDict, total=False):
    id: str
    title: str
    text: str
    score: float
    summarized: bool
    updated_at: str | None
    sources: list[dict[str, Any]]


class ContextBlock(TypedDict, total=False):
    kind: Literal["wiki", "semantic", "episodic", "working"]
    tokens: int
    items: list[ContextItem]


class Context(TypedDict, total=False):
    prompt: str
    blocks: list[ContextBlock]
    budget: dict[str, Any]
    warnings: list[Warning]
    freshness: dict[str, dict[str, Any]]
    next_cursor: str | None
    lang: str
    entities: list[str]


class Memory(TypedDict, total=False):
    id: int
    memory_type: MemoryType
    scope: Scope
    scope_key: str
    content: str
    importance: float
    status: str
    quality: float
    kind: str
    key: str
    occurred_at: str | None
    superseded_by: int | None
    duplicate_of: int
    meta: dict[str, Any]
    created_at: str
    updated_at: str


class MemoryList(TypedDict):
    items: list[Memory]
    count: int


class MemoryHit(TypedDict, total=False):
    memory: Memory
    score: float
    breakdown: dict[str, Any]


class Feedback(TypedDict):
    memory_id: int
    signal: Signal
    quality_before: float
    quality: float


class Session(TypedDict, total=False):
    id: int
    status: str
    started_at: str
    ended_at: str | None
    extracted_at: str | None
    turn_count: int


class Turn(TypedDict, total=False):
    id: int
    order: int
    role: Role
    content: str
    tokens: int


class Window(TypedDict):
    session_id: int
    turns: list[dict[str, Any]]
    tokens: int


class Document(TypedDict, total=False):
    id: int
    status: Literal["pending", "read", "done", "failed"]
    reason: str
    filename: str
    format: str
    size: int
    sha256: str
    scope: Scope
    scope_key: str
    pages: int
    characters: int
    memory_ids: list[int]


class SkillRun(TypedDict):
    output: dict[str, Any]
    run_id: int
    used_llm: bool


class Me(TypedDict):
    username: str
    email: str
    tenant: str
    groups: list[str]
