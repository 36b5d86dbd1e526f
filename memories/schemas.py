"""Input/output schemas of the Memories and Sessions API (docs/api.md)."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict, field_validator

from almanac.dates import year_problem
from almanac.jsonbody import storable_problem

MemoryType = Literal["semantic", "episodic", "working"]
Scope = Literal["user", "dept", "project", "tenant"]
Status = Literal["active", "compressed", "archived", "superseded"]
Kind = Literal["fact", "preference", "decision", "event", "clause", "summary"]
# What a PATCH may set: `compressed` is compression's own (an original a summary holds).
SettableStatus = Literal["active", "archived"]
MAX_META_CHARS = 10_000


def _check_meta(value: dict | None) -> dict | None:
    if value is None:
        return value
    problem = storable_problem(value, "meta")
    if problem:
        raise ValueError(problem)
    if len(json.dumps(value, ensure_ascii=False)) > MAX_META_CHARS:
        raise ValueError(f"meta is larger than {MAX_META_CHARS} characters of JSON")
    return value


def _check_occurred_at(value: date | None) -> date | None:
    problem = year_problem(value, "occurred_at")
    if problem:
        raise ValueError(problem)
    return value


class In(Schema):
    model_config = ConfigDict(extra="forbid")


class MemoryIn(In):
    user: str | None = None
    content: str
    memory_type: MemoryType = "semantic"
    scope: Scope = "user"
    scope_key: str | None = Field(None, max_length=200)
    importance: float = Field(0.5, ge=0, le=1)
    meta: dict = Field(default_factory=dict)
    occurred_at: date | None = None
    kind: Kind | None = None  # default: read from the text (以后…都…, "I prefer" → preference)
    # What it states a value of (subject + attribute, e.g. "客户C 合同金额"); default: read
    # from the text. A newer memory of the scope with the same key and another value
    # supersedes the older.
    key: str | None = Field(None, max_length=200)

    _meta = field_validator("meta")(_check_meta)
    _occurred_at = field_validator("occurred_at")(_check_occurred_at)


class MemoryPatch(In):
    user: str | None = None
    content: str | None = None
    importance: float | None = Field(None, ge=0, le=1)
    status: SettableStatus | None = None
    scope: Scope | None = None
    scope_key: str | None = Field(None, max_length=200)
    meta: dict | None = None
    occurred_at: date | None = None  # an episodic memory's day
    kind: Kind | None = None

    _meta = field_validator("meta")(_check_meta)
    _occurred_at = field_validator("occurred_at")(_check_occurred_at)

    @field_validator("status", mode="before")
    @classmethod
    def _not_compressed(cls, value):
        if value == "compressed":
            raise ValueError(
                "status may be set to 'active' or 'archived' only; 'compressed' is set by "
                "compression, for memories a summary holds"
            )
        return value


class MemoryOut(Schema):
    id: int
    memory_type: str
    scope: str
    scope_key: str
    content: str
    importance: float
    status: str
    access_count: int
    last_access: datetime | None
    quality: float
    schema_version: int
    occurred_at: date | None
    meta: dict
    created_at: datetime
    updated_at: datetime
    duplicate_of: int | None = None
    kind: str
    key: str = Field("", validation_alias="fact_key")
    superseded_by: int | None = Field(None, validation_alias="superseded_by_id")


class MemoryListOut(Schema):
    items: list[MemoryOut]
    count: int


class MemorySearchIn(In):
    user: str | None = None
    query: str = Field(..., min_length=1, max_length=2000)
    top_k: int = Field(10, ge=1, le=100)
    memory_types: list[MemoryType] | None = None


class Breakdown(Schema):
    """How a recall hit scored (docs/memories.md, "Ranking")."""

    vector_rank: int | None
    keyword_rank: int | None
    second_rank: int | None = Field(
        None, description="rank in the second encoder's lane (SEARCH_SECOND_ENCODER; an English query)"
    )
    rrf: float
    relevance: float = Field(
        description="RRF scaled to the best hit's + MEMORY_RERANK_WEIGHT × (similarity + keyword_coverage)"
    )
    importance: float
    recency: float
    quality: float
    exact_id: bool = False
    similarity: float = Field(
        description="best cosine similarity to a form of the query (the relevance floor's input)"
    )
    keyword_coverage: float = Field(
        description="share of the query's keyword weight the memory holds (the floor's other input)"
    )


class MemoryHitOut(Schema):
    memory: MemoryOut
    score: float
    breakdown: Breakdown


class MemorySearchOut(Schema):
    results: list[MemoryHitOut]


class FeedbackIn(In):
    user: str | None = None
    signal: Literal["adopted", "ignored", "corrected"]


class FeedbackOut(Schema):
    memory_id: int
    signal: str
    quality_before: float
    quality: float


class SessionIn(In):
    user: str | None = None
    title: str = Field("", max_length=300)


class SessionOut(Schema):
    id: int
    status: str
    started_at: datetime
    ended_at: datetime | None
    extracted_at: datetime | None
    turn_count: int


class TurnIn(In):
    user: str | None = None
    role: Literal["user", "assistant", "tool"]
    content: str


class TurnOut(Schema):
    id: int
    order: int
    role: str
    content: str
    tokens: int


class SessionUserIn(In):
    user: str | None = None


class WindowTurn(Schema):
    role: str
    content: str
    kind: Literal["turn", "summary"]
    tokens: int


class WindowOut(Schema):
    session_id: int
    turns: list[WindowTurn]
    tokens: int
