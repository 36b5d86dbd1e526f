from django.db import migrations


def refold(apps, schema_editor):
    """Entity keys as the current folding makes them (a region in a Chinese legal name, a
    singular "Holding"): a tag in the new spelling finds the existing entity instead of
    making a second one. The old key stays an alias key. A key another entity holds is left
    as it is (those two are for a person to merge)."""
    from wiki.folding import fold

    Entity = apps.get_model("wiki", "Entity")
    for entity in Entity.objects.order_by("id").iterator():
        key = fold(entity.name)[:300]
        if key == entity.key:
            continue
        taken = Entity.objects.filter(tenant_id=entity.tenant_id, kind=entity.kind, key=key).exists()
        if taken:
            continue
        entity.alias_keys = sorted({*entity.alias_keys, entity.key, key})
        entity.key = key
        entity.save(update_fields=["key", "alias_keys"])


class Migration(migrations.Migration):
    dependencies = [("wiki", "0008_entity_named_in")]

    operations = [migrations.RunPython(refold, migrations.RunPython.noop)]
