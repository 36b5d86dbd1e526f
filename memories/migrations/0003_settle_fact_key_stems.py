"""Memories' fact keys with their English stems settled: stemming a stem can cut it again
("expense" → "expens" → "expen"), so a stored key no longer met the same key passed again
by an extractor. Each word of a stored key becomes its settled stem
(`almanac.text.claims.key_settle`); the attribute (" ·owner") stays."""

from django.db import migrations

from almanac.text.claims import key_settle

BATCH = 2000


def settle(apps, schema_editor):
    Memory = apps.get_model("memories", "Memory")
    keys = Memory.objects.exclude(fact_key="").values_list("fact_key", flat=True).distinct()
    changed = {key: new for key in keys.iterator(chunk_size=BATCH) if (new := key_settle(key)) != key}
    for key, new in changed.items():
        Memory.objects.filter(fact_key=key).update(fact_key=new)


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_refold_fact_keys")]

    operations = [migrations.RunPython(settle, migrations.RunPython.noop, elidable=True)]
