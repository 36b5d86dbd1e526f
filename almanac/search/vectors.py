"""Nearest rows by cosine distance inside an (access-filtered) queryset, shared by every app.

The HNSW index drives: every connection starts with pgvector's iterative scans on
(settings: HNSW_*), so a filtered scan keeps going until enough rows pass the filter. If
it still returns fewer than asked — a small visible set inside a big table, or a scan
that hit HNSW_MAX_SCAN_TUPLES — an exact scan of the filtered rows answers instead
(`distance + 0` cannot use the index, so the planner sorts the filtered rows). A filter
therefore never makes a search return fewer rows than exist.
"""

from __future__ import annotations

import numpy as np
from django.db import connections
from pgvector import Vector

from almanac.search.floors import CJK_SQL_PATTERN
from almanac.selectors import where_sql


def nearest(
    queryset,
    vector,
    size: int,
    *,
    exact: bool = False,
    field: str = "embedding",
    extra: tuple[str, ...] = (),
    cjk_of: str | None = None,
) -> list[tuple]:
    """(id, cosine distance, *extra columns) of the `size` rows of `queryset` nearest to
    `vector`, best first; with `cjk_of` (a text column) also whether that text holds a
    Chinese character (its script, for the similarity floor: `almanac.search.floors`)."""
    visible = where_sql(queryset)
    if visible is None:
        return []
    db = connections[queryset.db]
    table = db.ops.quote_name(queryset.model._meta.db_table)
    column = f"{table}.{db.ops.quote_name(queryset.model._meta.get_field(field).column)}"
    literal = vector_literal(vector)
    columns = "".join(f", {table}.{db.ops.quote_name(c)}" for c in extra)
    params = [literal]
    if cjk_of:
        columns += f", {table}.{db.ops.quote_name(cjk_of)} ~ %s"
        params.append(CJK_SQL_PATTERN)
    rows = f"SELECT {table}.id, {column} <=> %s::vector AS d{columns} FROM {table} WHERE ({visible[0]})"

    def scan(exact_order: bool) -> list[tuple]:
        # `d + 0` is no index order: the planner sorts the filtered rows (exact).
        sql = f"SELECT * FROM ({rows}) r ORDER BY d + 0, id" if exact_order else f"{rows} ORDER BY d, id"
        with db.cursor() as cursor:
            cursor.execute(f"{sql} LIMIT %s", [*params, *visible[1], size])
            return cursor.fetchall()

    hits = scan(exact)
    if not exact and len(hits) < size:
        hits = scan(True)
    return sorted(hits, key=lambda row: (row[1], row[0]))  # relaxed_order may be slightly out of order


_literals: dict[bytes, str] = {}


def vector_literal(vector) -> str:
    """The vector as pgvector text, remembered for the last few query vectors: a request
    searches several tables with the same one (512 floats to format each time)."""
    key = np.asarray(vector, dtype=np.float32).tobytes()
    literal = _literals.get(key)
    if literal is None:
        literal = Vector(vector).to_text()
        if len(_literals) >= 64:
            _literals.clear()
        _literals[key] = literal
    return literal
