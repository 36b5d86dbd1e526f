"""Code that data migrations share (each migration stays a thin call)."""

from __future__ import annotations

from collections.abc import Callable


def reindex_thousands(model, *, corpus: str, text: Callable, fields: tuple[str, ...], related=()) -> int:
    """Index again the rows of `model` whose `fields` write a number with thousands
    separators ("¥1,200"), for a segmenter that reads it as one number; their corpus
    statistics move with them. Rows are updated in place (no history row: only the keyword
    index changes). Returns how many changed."""
    from django.db.models import Q

    from almanac import keyword

    where = Q()
    for name in fields:
        where |= Q(**{f"{name}__regex": r"[0-9],[0-9]{3}"})
    changed = 0
    for row in model.objects.filter(where).select_related(*related).order_by("pk").iterator():
        new = keyword.index_fields(text(row))
        if new["tokens"] == row.tokens:
            continue
        old = {"tokens": row.tokens, "tf": row.tf, "doc_len": row.doc_len}
        model.objects.filter(pk=row.pk).update(tokens=new["tokens"], tf=new["tf"], doc_len=new["doc_len"])
        keyword.stats_apply(tenant_id=row.tenant_id, corpus=corpus, old=old, new=new)
        changed += 1
    return changed
