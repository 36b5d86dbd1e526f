from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from almanac.embedding_columns import column_restore, column_retype, current_dimension, embedded_models
from almanac.pgtools import connected_as_owner
from almanac.search.embeddings import embed


class Command(BaseCommand):
    help = "Re-embed every memory and wiki section with the configured backend; changes the vector dimension if needed."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=256, help="rows embedded per round (1 or more)")

    def handle(self, batch, **options):
        if batch < 1:
            raise CommandError(f"--batch must be 1 or more, not {batch}")
        with connected_as_owner():  # retyping a column is the owner role's work
            self._handle(batch)

    def _handle(self, batch):
        dim = settings.EMBEDDING_DIM
        for model, field in embedded_models():
            with transaction.atomic():
                resize = current_dimension(model._meta.db_table) != dim
                if resize:
                    column_retype(model, dim)
                total = self._reembed(model, batch)
                if resize:
                    column_restore(model, field.null)
            self.stdout.write(f"{model._meta.label}: {total} rows embedded at {dim} dimensions")

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
