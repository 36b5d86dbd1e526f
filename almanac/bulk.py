"""Bulk inserts through binary COPY: many rows of one model in one stream instead of one
statement holding every value as text (what `bulk_create` builds, the client quotes and the
server parses again; an embedding alone is 512 floats).

Used where a batch writes thousands of rows (the wiki compiler's sections and their history
rows). Primary keys are taken from the table's sequence first, so the objects have them,
as after `bulk_create`."""

from __future__ import annotations

from django.db import connection
from django.db.models import JSONField
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo

_column_types: dict[tuple[str, str], dict[str, int]] = {}
_vector_types: dict[str, TypeInfo] = {}


def _types(cursor, table: str) -> dict[str, int]:
    """{column: type oid} of a table (per database; cached)."""
    key = (connection.settings_dict["NAME"], table)
    if key not in _column_types:
        cursor.execute(
            "SELECT attname, atttypid FROM pg_attribute "
            "WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped",
            [table],
        )
        _column_types[key] = dict(cursor.fetchall())
    return _column_types[key]


def copy_insert(model, objs: list) -> None:
    """Insert `objs` (unsaved instances of `model`) with binary COPY, in the caller's transaction.

    Every concrete column except generated ones is written; `pre_save(add=True)` runs for each
    field, as on `save()` (`auto_now_add` and `auto_now` stamps). JSON goes as the field
    prepares it, every other value as it is (a vector as its numpy array). No signals are sent."""
    if not objs:
        return
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.generated]
    json = [isinstance(f, JSONField) for f in fields]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    with connection.cursor() as wrapper:
        cursor = wrapper.cursor  # psycopg's own, for COPY
        types = _types(wrapper, meta.db_table)
        database = connection.settings_dict["NAME"]
        if database not in _vector_types:
            _vector_types[database] = TypeInfo.fetch(cursor.connection, "vector")
        register_vector_info(cursor, _vector_types[database])
        wrapper.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(objs)],
        )
        for obj, (pk,) in zip(objs, wrapper.fetchall(), strict=True):
            setattr(obj, meta.pk.attname, pk)
        with cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([types[f.column] for f in fields])
            for obj in objs:
                row = [f.pre_save(obj, True) for f in fields]
                copy.write_row(
                    [
                        f.get_db_prep_save(v, connection) if j and v is not None else v
                        for f, j, v in zip(fields, json, row, strict=True)
                    ]
                )
    for obj in objs:
        obj._state.adding, obj._state.db = False, connection.alias
