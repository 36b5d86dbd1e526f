"""Memories' fact keys spelt by the one rule of `almanac.text.claims`: its amount reader
now reads the period of an amount of money as part of the value ("¥250万/年", "$195k per
year"), so those words are no longer part of the key. A stored key is replaced only by the
key its text now gives when that drops words from it and adds none (a key named by an
extractor or a caller, which the text does not give, stays)."""

from django.db import migrations

from almanac.text.claims import claim

BATCH = 2000


def _refolded(content: str, key: str) -> str | None:
    found = claim(content)
    if found is None or not found.key or found.key == key:
        return None
    return found.key if set(found.key.split()) <= set(key.split()) else None


def refold(apps, schema_editor):
    Memory = apps.get_model("memories", "Memory")
    rows = Memory.objects.exclude(fact_key="").values_list("pk", "content", "fact_key")
    changed = {}
    for pk, content, key in rows.iterator(chunk_size=BATCH):
        new = _refolded(content, key)
        if new is not None:
            changed[pk] = new
    for pk, key in changed.items():
        Memory.objects.filter(pk=pk).update(fact_key=key)


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_squashed_0012_needs_review")]

    operations = [migrations.RunPython(refold, migrations.RunPython.noop, elidable=True)]
