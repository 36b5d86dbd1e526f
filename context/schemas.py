"""Input and output of `POST /api/v1/context` (docs/api.md, Context: keep the field names)."""

from __future__ import annotations

import unicodedata
from typing import Literal

from django.conf import settings
from ninja import Schema
from pydantic import ConfigDict, Field, field_validator


class ContextIn(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str | None = Field(default=None, max_length=300)
    task: str
    max_tokens: int = Field(default_factory=lambda: settings.CONTEXT_DEFAULT_MAX_TOKENS)
    session_id: int | None = Field(default=None, ge=1, le=2**63 - 1)
    lang: Literal["zh", "en"] | None = None
    cursor: str | None = Field(default=None, max_length=20000)

    @field_validator("task")
    @classmethod
    def task_is_usable(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("task must not contain NUL bytes")
        if not any(c.strip() and unicodedata.category(c) != "Cf" for c in value):  # blanks, zero-widths
            raise ValueError("task must not be empty")
        if len(value) > settings.CONTEXT_TASK_MAX_CHARS:
            raise ValueError(
                f"task is {len(value)} characters; the limit is {settings.CONTEXT_TASK_MAX_CHARS}"
            )
        return value

    @field_validator("max_tokens", mode="before")
    @classmethod
    def max_tokens_is_no_boolean(cls, value):
        if isinstance(value, bool):  # JSON true is not a budget of 1
            raise ValueError("max_tokens must be an integer")
        return value

    @field_validator("max_tokens")
    @classmethod
    def max_tokens_in_range(cls, value: int) -> int:
        if not 1 <= value <= settings.CONTEXT_MAX_TOKENS_LIMIT:
            raise ValueError(f"max_tokens must be between 1 and {settings.CONTEXT_MAX_TOKENS_LIMIT}")
        return value


class ItemSourceOut(Schema):
    source: str
    url: str = ""
    occurred_at: str | None = None
    name: str = ""  # the container, e.g. "#sales" (added field)


class ItemOut(Schema):
    id: str
    title: str
    text: str
    score: float
    summarized: bool
    updated_at: str | None = None
    # wiki items: when the newest section shown was said, and the page's status as the reader
    # sees it ("open — 2 open issues, 1 open PR"; "" when it has none)
    content_at: str | None = None
    status: str | None = None
    sources: list[ItemSourceOut] = []


class BlockOut(Schema):
    kind: Literal["wiki", "semantic", "episodic", "working"]
    tokens: int
    items: list[ItemOut]


class BudgetOut(Schema):
    max_tokens: int
    used: int
    blocks: dict[str, int] = {}


class WarningOut(Schema):
    code: Literal["summarized", "source_lagging", "stale_excluded", "budget_exceeded", "nothing_relevant"]
    detail: str
    items: list[str] = []


class ContextOut(Schema):
    prompt: str
    blocks: list[BlockOut]
    budget: BudgetOut
    warnings: list[WarningOut]
    freshness: dict[str, dict]
    next_cursor: str | None
    lang: Literal["zh", "en"]
    entities: list[str] = []
