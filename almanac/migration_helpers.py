"""Code that data migrations share (each migration stays a thin call)."""

from __future__ import annotations

from collections.abc import Callable


def reindex_changed_text(
    model, *, corpus: str, text: Callable, fields: tuple[str, ...], related=(), words=()
) -> int:
    """Index again the rows of `model` that an upgrade of the segmenter reads differently:
    those writing a number with thousands separators ("¥1,200" is now one number, 1200) or
    traditional Chinese (華為 is now 华为). Their corpus statistics move with them; rows are
    updated in place (no history row: only the keyword index changes). `words`: entity names
    to teach the segmenter first, as the processes that indexed the rows knew them.
    Returns how many changed."""
    from almanac import keyword
    from almanac.search import THOUSANDS, add_words, simplified

    add_words(words)
    changed = 0
    rows = model.objects.select_related(*related).only(
        "pk", "tenant_id", "tokens", "tf", "doc_len", *fields, *(f"{r}__title" for r in related)
    )
    for row in rows.order_by("pk").iterator(chunk_size=500):
        raw = [getattr(row, name) or "" for name in fields]
        if not any(THOUSANDS.search(t) or simplified(t) != t for t in raw):
            continue
        new = keyword.index_fields(text(row))
        if new["tokens"] == row.tokens:
            continue
        old = {"tokens": row.tokens, "tf": row.tf, "doc_len": row.doc_len}
        model.objects.filter(pk=row.pk).update(tokens=new["tokens"], tf=new["tf"], doc_len=new["doc_len"])
        keyword.stats_apply(tenant_id=row.tenant_id, corpus=corpus, old=old, new=new)
        changed += 1
    return changed


def refold_entity_keys(Entity) -> int:
    """Entity keys as the current folding makes them: a tag in the new spelling finds the
    existing entity instead of making a second one. The old key stays an alias key. A key
    another entity holds is left as it is (those two are for a person to merge)."""
    from wiki.folding import fold

    changed = 0
    for entity in Entity.objects.order_by("id").iterator():
        key = fold(entity.name)[:300]
        if key == entity.key:
            continue
        if Entity.objects.filter(tenant_id=entity.tenant_id, kind=entity.kind, key=key).exists():
            continue
        entity.alias_keys = sorted({*entity.alias_keys, entity.key, key})
        entity.key = key
        entity.save(update_fields=["key", "alias_keys"])
        changed += 1
    return changed
