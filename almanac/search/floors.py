"""Similarity floors per script pair: how similar a hit must be to the query when the two
are written in the same script (English, Chinese) or in different ones.

A multilingual encoder puts a question and its answer closer when they share a language:
a short Chinese question and the English note that answers it meet at a lower cosine than
the same question asked in English (calibrated on bench/quality's cross-language set, see
docs/memories.md "Ranking, measured"). One floor for every pair either drops the
cross-language answers or lets same-language noise through. A text's script is the one
language rule (`almanac.search.text.is_cjk`: any Chinese character is Chinese).
"""

from __future__ import annotations

from dataclasses import dataclass

from almanac.search.text import CJK_RANGES

# A Postgres regular expression (ARE) true for a text holding a Chinese character: the same
# ranges as `is_cjk`, so a row's script read in SQL agrees with one read in Python.
CJK_SQL_PATTERN = f"[{CJK_RANGES}]"


def script_pair(*, query_zh: bool, doc_zh: bool) -> str:
    """ "en" (both English), "zh" (both Chinese) or "cross" (one of each)."""
    if query_zh != doc_zh:
        return "cross"
    return "zh" if query_zh else "en"


@dataclass(frozen=True)
class Floors:
    """The least cosine similarity a hit needs for each script pair (`script_pair`)."""

    en: float
    zh: float
    cross: float

    def of(self, pair: str) -> float:
        return getattr(self, pair)
