from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from almanac.embedding_columns import (
    column_restore,
    column_retype,
    current_dimension,
    embedded_models,
    second_fill,
    second_missing,
    second_models,
)
from almanac.pgtools import connected_as_owner
from almanac.search import second
from almanac.search.embeddings import embed


class Command(BaseCommand):
    help = (
        "Re-embed every memory and wiki section with the configured backend; changes the vector dimension "
        "if needed. --second: fill the second encoder's vectors still missing (resumes where a run stopped)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=256, help="rows embedded per round (1 or more)")
        parser.add_argument(
            "--second", action="store_true", help="fill the missing vectors of SEARCH_SECOND_ENCODER"
        )

    def handle(self, batch, second, **options):
        if batch < 1:
            raise CommandError(f"--batch must be 1 or more, not {batch}")
        if second:
            return self._second(min(batch, 64))
        with connected_as_owner():  # retyping a column is the owner role's work
            self._handle(batch)

    def _second(self, batch):
        if not second.enabled():
            raise CommandError("set SEARCH_SECOND_ENCODER (e5) first: there is no second encoder to fill")
        for model in second_models():
            label, total = model._meta.label, second_missing(model)
            self.stdout.write(f"{label}: {total} rows to embed with {settings.SEARCH_SECOND_ENCODER}")

            def progress(done, label=label, total=total):
                self.stdout.write(f"{label}: {done} of {total}")

            done = second_fill(model, batch=batch, on_batch=progress)
            self.stdout.write(f"{label}: {done} rows embedded with {settings.SEARCH_SECOND_ENCODER}")

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
