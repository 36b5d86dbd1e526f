from django.db import migrations

from almanac.migration_helpers import reindex_thousands


def reindex(apps, schema_editor):
    """Memories that write a number with thousands separators ("¥1,200"), indexed again now
    that the segmenter reads it as one number (1200)."""
    Memory = apps.get_model("memories", "Memory")
    reindex_thousands(Memory, corpus="memory", text=lambda m: m.content, fields=("content",))


class Migration(migrations.Migration):
    dependencies = [("memories", "0008_memory_owner_set_null")]

    operations = [migrations.RunPython(reindex, migrations.RunPython.noop)]
