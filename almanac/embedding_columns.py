"""The vector columns' dimension follows EMBEDDING_DIM.

Migrations create `vector(512)` columns (the built-in model's size). `reembed` retypes them
and re-embeds every row; on a fresh install with another EMBEDDING_DIM, `migrate` retypes
the still empty columns itself (post_migrate), so the first write does not fail.

The second encoder's column (`embedding_e5`, fixed at its model's 384 dimensions) is filled
by `second_fill`: after each write (a task) and by `reembed --second`."""

from __future__ import annotations

from django.apps import apps
from django.conf import settings
from django.db import connection, transaction
from pgvector.django import HnswIndex, VectorField

MIGRATED_DIM = 512  # the size the migrations create


class EmbeddingField(VectorField):
    """A vector column of EMBEDDING_DIM dimensions that the migrations know as `vector(512)`.

    The column follows the setting through `migrate` (empty columns) and `reembed` (filled
    ones), not through a migration: whatever EMBEDDING_DIM is, the field deconstructs as
    the migrations wrote it, so `makemigrations --check` stays clean on every install."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("dimensions", settings.EMBEDDING_DIM)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, _, args, kwargs = super().deconstruct()
        kwargs["dimensions"] = MIGRATED_DIM
        return name, "pgvector.django.vector.VectorField", args, kwargs


def embedded_models():
    """(model, field) for each model with an `embedding` vector column computed from its `content`."""
    for model in apps.get_models():
        field = next((f for f in model._meta.fields if f.name == "embedding"), None)
        if isinstance(field, VectorField) and any(f.name == "content" for f in model._meta.fields):
            yield model, field


def current_dimension(table: str) -> int | None:
    """The dimension of `table`'s embedding column, or None (no dimension, or no such table
    yet: a `migrate` of some apps only runs this before the others' tables exist)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
            [table],
        )
        row = cursor.fetchone()
    return row[0] if row and row[0] > 0 else None


def hnsw_indexes(model) -> list[HnswIndex]:
    return [i for i in model._meta.indexes if isinstance(i, HnswIndex)]


def column_retype(model, dim: int) -> None:
    """Drop the HNSW indexes and retype the column, its values NULL (re-embed them next)."""
    with connection.schema_editor() as editor:
        editor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER refuses pending deferred checks
        for index in hnsw_indexes(model):
            editor.remove_index(model, index)
        table = editor.quote_name(model._meta.db_table)
        editor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding DROP NOT NULL")
        editor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({dim}) USING NULL")


def column_restore(model, nullable: bool) -> None:
    """NOT NULL and the HNSW indexes back, once every row has its vector again."""
    with connection.schema_editor() as editor:
        if not nullable:
            table = editor.quote_name(model._meta.db_table)
            editor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET NOT NULL")
        for index in hnsw_indexes(model):
            editor.add_index(model, index)


def empty_columns_fit() -> list[str]:
    """Retype the empty vector columns whose dimension is not EMBEDDING_DIM; returns the
    tables that hold rows at another dimension (those need `reembed`)."""
    dim, stale = settings.EMBEDDING_DIM, []
    for model, field in embedded_models():
        table = model._meta.db_table
        if current_dimension(table) in (None, dim):
            continue
        with transaction.atomic():
            if model.objects.exists():
                stale.append(table)
                continue
            column_retype(model, dim)
            column_restore(model, field.null)
    return stale


# --- The second encoder's column (almanac.search.second) ---------------------------------

SECOND_FIELD = "embedding_e5"


def second_models():
    """Each model with a second-encoder vector column computed from its `content`."""
    for model in apps.get_models():
        names = {f.name for f in model._meta.fields}
        if SECOND_FIELD in names and "content" in names:
            yield model


def second_missing(model) -> int:
    return model.objects.filter(**{f"{SECOND_FIELD}__isnull": True}).count()


def second_fill(model, *, batch: int = 64, on_batch=None) -> int:
    """Embed the rows of `model` that have no second-encoder vector yet, `batch` at a time,
    oldest first; returns how many were filled. Each batch commits on its own, so a run
    stopped half-way resumes where it was (the rows still missing). A row whose text
    changed while its batch was embedded is left for its own change's task.
    `on_batch(done)` is told the running count after each batch."""
    from almanac.search.second import embed_passages

    table = connection.ops.quote_name(model._meta.db_table)
    done = last = 0
    while True:
        missing = model.objects.filter(**{f"{SECOND_FIELD}__isnull": True, "pk__gt": last})
        rows = list(missing.order_by("pk").values_list("pk", "content")[:batch])
        if not rows:
            return done
        vectors = embed_passages([content for _, content in rows])
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {table} SET {SECOND_FIELD} = %s::vector WHERE id = %s AND content = %s",
                [(str(v.tolist()), pk, content) for (pk, content), v in zip(rows, vectors, strict=True)],
            )
        done += len(rows)
        last = rows[-1][0]
        if on_batch is not None:
            on_batch(done)
