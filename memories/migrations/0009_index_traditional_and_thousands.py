from django.db import migrations

from almanac.migration_helpers import entity_words, reindex_changed_text


def reindex(apps, schema_editor):
    """Memories that write traditional Chinese or a number with thousands separators,
    indexed again for the segmenter that reads them as simplified and as one number."""
    reindex_changed_text(
        apps.get_model("memories", "Memory"),
        corpus="memory",
        text=lambda m: m.content,
        words=entity_words(apps.get_model("wiki", "Entity")),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0008_memory_owner_set_null"),
        ("wiki", "0010_fold_and_index_traditional_and_thousands"),
    ]

    operations = [migrations.RunPython(reindex, migrations.RunPython.noop)]
