"""Helpers shared by the memory services: input checks, language, the log."""

from __future__ import annotations

import logging

from almanac.errors import ApplicationError

log = logging.getLogger("memories")


def clean_text(value: str | None, *, field: str, max_chars: int) -> str:
    """Reject empty, NUL-containing or oversized text with a clear 4xx."""
    text = (value or "").strip()
    if not text:
        raise ApplicationError(f"{field} may not be empty", status_code=422)
    if "\x00" in text:
        raise ApplicationError(f"{field} may not contain NUL bytes", status_code=422)
    if len(text) > max_chars:
        raise ApplicationError(f"{field} is too long ({len(text)} > {max_chars} characters)", status_code=422)
    return text
