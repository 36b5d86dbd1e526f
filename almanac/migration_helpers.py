"""Code that data migrations share (each migration stays a thin call)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable


def entity_words(Entity) -> list[str]:
    """Every entity name and alias: what live processes teach the segmenter."""
    words = []
    for name, aliases in Entity.objects.values_list("name", "aliases"):
        words += [name, *(aliases or [])]
    return words


def reindex_changed_text(model, *, corpus: str, text: Callable, related=(), words=()) -> int:
    """Index again the rows of `model` whose keyword text (`text(row)`) an upgrade of the
    segmenter reads differently: those writing a number with thousands separators ("¥1,200",
    "1，200" is now one number) or traditional Chinese (華為 is now 华为). Their corpus
    statistics move with them; rows are updated in place (no history row: only the keyword
    index changes). `words`: the entity names and aliases to teach the segmenter first, as
    the processes that indexed the rows knew them. Returns how many changed."""
    from almanac.search import keyword
    from almanac.search.text import add_words, prepare

    add_words(words)
    changed = 0
    rows = model.objects.select_related(*related).defer("embedding")
    for row in rows.order_by("pk").iterator(chunk_size=500):
        said = text(row)
        if prepare(said) == unicodedata.normalize("NFKC", said):
            continue  # read as before
        new = keyword.index_fields(said)
        if new["tokens"] == row.tokens:
            continue
        old = {"tokens": row.tokens, "tf": row.tf, "doc_len": row.doc_len}
        model.objects.filter(pk=row.pk).update(tokens=new["tokens"], tf=new["tf"], doc_len=new["doc_len"])
        keyword.stats_apply(tenant_id=row.tenant_id, corpus=corpus, old=old, new=new)
        changed += 1
    return changed
