"""Dates in facts, relative to the session date: `3 月 12 日`, `三月五日`, `2025-03-12`,
`去年3月5日`, `上周五`, `last Friday`, `last month`.

One reader for the project (`almanac.text.dates.find_date`, which the `fact_extract`
skill uses too), so a fact dated by the skill and one dated here agree (e.g. `12月1日` said on 2026-03-20 is
2025-12-01 in both; the rule is in that module's docstring).
"""

from __future__ import annotations

from datetime import date

from almanac.text.dates import find_date


def parse_occurred(text: str, base: date) -> date | None:
    """The date a fact (known to be an event) talks about, or None."""
    return find_date(text or "", base, periods=True)
