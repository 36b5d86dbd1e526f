"""Nearest rows by cosine distance inside an (access-filtered) queryset, shared by every app.

The HNSW index drives: every connection starts with pgvector's iterative scans on
(settings: HNSW_*), so a filtered scan keeps going until enough rows pass the filter. If
it still returns fewer than asked — a small visible set inside a big table, or a scan
that hit HNSW_MAX_SCAN_TUPLES — an exact scan of the filtered rows answers instead
(`distance + 0` cannot use the index, so the planner sorts the filtered rows). A filter
therefore never makes a search return fewer rows than exist.
"""

from __future__ import annotations

from django.db.models import Value
from pgvector.django import CosineDistance


def nearest(
    queryset, vector, size: int, *, exact: bool = False, field: str = "embedding"
) -> list[tuple[int, float]]:
    """(id, cosine distance) of the `size` rows of `queryset` nearest to `vector`, best first."""
    dist = CosineDistance(field, vector)
    rows = queryset.annotate(vector_distance=dist)

    def scan(order) -> list[tuple[int, float]]:
        return list(rows.order_by(order, "id").values_list("id", "vector_distance")[:size])

    hits = scan(dist + Value(0.0) if exact else dist)
    if not exact and len(hits) < size:
        hits = scan(dist + Value(0.0))
    return sorted(hits, key=lambda pair: (pair[1], pair[0]))  # relaxed_order may be slightly out of order
