from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from pgvector.django import HnswIndex, VectorField

from almanac.search import embed


def embedded_models():
    """Models with an `embedding` vector column computed from their `content`."""
    for model in apps.get_models():
        field = next((f for f in model._meta.fields if f.name == "embedding"), None)
        if isinstance(field, VectorField) and any(f.name == "content" for f in model._meta.fields):
            yield model, field


def current_dimension(table: str) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'",
            [table],
        )
        row = cursor.fetchone()
    return row[0] if row and row[0] > 0 else None


class Command(BaseCommand):
    help = "Re-embed every memory and wiki section with the configured backend; changes the vector dimension if needed."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=256)

    def handle(self, batch, **options):
        dim = settings.EMBEDDING_DIM
        for model, field in embedded_models():
            indexes = [i for i in model._meta.indexes if isinstance(i, HnswIndex)]
            with transaction.atomic():
                resize = current_dimension(model._meta.db_table) != dim
                if resize:
                    self._resize(model, indexes, dim)
                total = self._reembed(model, batch)
                if resize:
                    self._restore(model, indexes, field.null)
            self.stdout.write(f"{model._meta.label}: {total} rows embedded at {dim} dimensions")

    def _resize(self, model, indexes, dim):
        """Drop the HNSW indexes and retype the column; the rows are re-embedded next."""
        with connection.schema_editor() as editor:
            editor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER refuses pending deferred checks
            for index in indexes:
                editor.remove_index(model, index)
            table = editor.quote_name(model._meta.db_table)
            editor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding DROP NOT NULL")
            editor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({dim}) USING NULL")

    def _restore(self, model, indexes, nullable):
        with connection.schema_editor() as editor:
            if not nullable:
                table = editor.quote_name(model._meta.db_table)
                editor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET NOT NULL")
            for index in indexes:
                editor.add_index(model, index)

    def _reembed(self, model, batch):
        total = last = 0
        table = connection.ops.quote_name(model._meta.db_table)
        while True:
            rows = list(model.objects.filter(pk__gt=last).order_by("pk").values_list("pk", "content")[:batch])
            if not rows:
                return total
            vectors = embed([content for _, content in rows])
            with connection.cursor() as cursor:
                cursor.executemany(
                    f"UPDATE {table} SET embedding = %s::vector WHERE id = %s",
                    [(str(vector.tolist()), pk) for (pk, _), vector in zip(rows, vectors, strict=True)],
                )
            total += len(rows)
            last = rows[-1][0]
