"""Input/output shapes of the wiki API (docs/api.md, Wiki)."""

from __future__ import annotations

from datetime import datetime

from ninja import Schema
from pydantic import ConfigDict, Field, field_validator


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("NUL bytes are not allowed")
    return value


class WikiSearchIn(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str | None = Field(None, max_length=300)
    query: str = Field(min_length=1, max_length=4000)
    top_k: int = Field(10, ge=1, le=100)

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        value = _no_nul(value)
        if not value.strip():
            raise ValueError("query may not be blank")
        return value


class ConfirmIn(Schema):
    model_config = ConfigDict(extra="forbid")

    user: str | None = Field(None, max_length=300)
    section_ids: list[int] = Field(min_length=1, max_length=500)
    # why the recalled content stands (required to confirm a stale section; audited)
    reason: str = Field("", max_length=1000, pattern=r"^[^\x00]*$")


class WikiSourceOut(Schema):
    source: str
    url: str
    occurred_at: str | None
    ref: str = ""  # the item's id in its source: an e-mail's Message-ID, a Slack channel/ts, …


class SectionOut(Schema):
    id: int
    page: str
    title: str
    container: str
    content: str
    occurred_at: datetime
    updated_at: datetime
    stale: bool
    sources: list[WikiSourceOut]


class PageOut(Schema):
    slug: str
    kind: str
    title: str
    status: str
    status_detail: str = ""
    updated_at: datetime
    content_at: datetime | None = None
    sections: int


class PageDetailOut(Schema):
    slug: str
    kind: str
    title: str
    status: str
    status_detail: str = ""
    aliases: list[str]
    summary: str
    updated_at: datetime
    content_at: datetime | None = None
    sections: list[SectionOut]
    stale_sections: int
    stale_section_ids: list[int] = []


class SectionHitOut(Schema):
    section: SectionOut
    score: float
    breakdown: dict


class PageHitOut(Schema):
    page: PageOut
    score: float
    sections: list[SectionHitOut]


class WikiSearchOut(Schema):
    results: list[PageHitOut]


class ConfirmOut(Schema):
    confirmed: list[int]
