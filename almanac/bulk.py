"""Bulk inserts through COPY: many rows of one model in one stream instead of one statement
holding every value (what `bulk_create` builds, and what the client then parses again).

Used where a batch writes thousands of rows (the wiki compiler's sections and their history
rows). Primary keys are taken from the table's sequence first, so the objects have them,
as after `bulk_create`."""

from __future__ import annotations

from django.db import connection
from django.db.models import JSONField
from pgvector.django import VectorField


def _converter(field):
    """How a field's Python value becomes what COPY sends: JSON and vectors as the field
    prepares them, every other value as it is (psycopg dumps str, int, bool, datetime, list)."""
    if isinstance(field, JSONField | VectorField):
        return lambda value: field.get_db_prep_save(value, connection)
    return None


def copy_insert(model, objs: list) -> None:
    """Insert `objs` (unsaved instances of `model`) with COPY, in the caller's transaction.

    Every concrete column except generated ones is written; `pre_save(add=True)` runs for each
    field, as on `save()` (`auto_now_add` and `auto_now` stamps). No signals are sent."""
    if not objs:
        return
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.generated]
    converters = [_converter(f) for f in fields]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(objs)],
        )
        for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
            setattr(obj, meta.pk.attname, pk)
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                row = [f.pre_save(obj, True) for f in fields]
                copy.write_row(
                    [c(v) if c and v is not None else v for c, v in zip(converters, row, strict=True)]
                )
    for obj in objs:
        obj._state.adding, obj._state.db = False, connection.alias
