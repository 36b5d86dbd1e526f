"""Schemas of the documents endpoints (docs/api.md, Documents)."""

from __future__ import annotations

from datetime import datetime

from ninja import Schema


class DocumentOut(Schema):
    id: int
    status: str  # pending, read, done, failed
    reason: str  # why it failed ("" otherwise)
    filename: str
    format: str  # pdf, markdown, text
    size: int
    sha256: str
    scope: str
    scope_key: str
    pages: int
    characters: int
    memory_ids: list[int]  # the memories it produced that the acting user may see
    created_at: datetime
    updated_at: datetime
