"""Input/output schemas of the Skills API (docs/api.md, Skills)."""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema
from pydantic import ConfigDict, field_validator

from almanac.jsonbody import storable_problem


class SkillOut(Schema):
    name: str
    version: str
    description: str
    input_schema: dict[str, Any] = Field(description="JSON schema of the `input` a caller sends")
    output_schema: dict[str, Any] = Field(description="JSON schema of the `output` a run returns")
    triggers: list[str] = Field(description="api, event:<name> per event it runs on, schedule")


class SkillListOut(Schema):
    skills: list[SkillOut]


class SkillRunIn(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)

    @field_validator("input")
    @classmethod
    def _storable(cls, value: dict) -> dict:
        problem = storable_problem(value, "input")
        if problem:
            raise ValueError(problem)
        return value


class SkillRunOut(Schema):
    output: dict[str, Any]
    run_id: int = Field(description="the run's record (SkillRun)")
    used_llm: bool = Field(description="whether the LLM made the output (false: the offline rules)")
