"""Fusion of ranked lists."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def rrf(*ranked_lists: Sequence[Hashable], k: int = 60) -> list[tuple[Hashable, float]]:
    """Reciprocal rank fusion: sum of 1/(k + rank) over the lists (rank starts at 1)."""
    scores: dict[Hashable, float] = {}
    for ranked in ranked_lists:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], str(pair[0])))
