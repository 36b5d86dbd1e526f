"""Code that the wiki's data migrations share (each migration stays a thin call)."""

from __future__ import annotations

from wiki.folding import fold


def refold_entity_keys(Entity) -> int:
    """Entity keys and alias keys as the current folding makes them: a tag or a text in the
    new spelling finds the existing entity instead of making a second one. Old keys stay
    alias keys. A key another entity holds is left as it is (those two are for a person to
    merge); its alias keys are still refolded."""
    changed = 0
    for entity in Entity.objects.order_by("id").iterator():
        key = fold(entity.name)[:300]
        folded = {fold(a)[:300] for a in [entity.name, *(entity.aliases or [])] if a} - {""}
        alias_keys = sorted({*entity.alias_keys, entity.key, *folded})
        taken = (
            key != entity.key
            and Entity.objects.filter(tenant_id=entity.tenant_id, kind=entity.kind, key=key).exists()
        )
        new_key = entity.key if taken else key
        if (new_key, alias_keys) == (entity.key, sorted(entity.alias_keys)):
            continue
        entity.key, entity.alias_keys = new_key, alias_keys
        entity.save(update_fields=["key", "alias_keys"])
        changed += 1
    return changed
