from django.db import migrations

from almanac.migration_helpers import entity_words, reindex_changed_text
from wiki.migration_helpers import refold_entity_keys


def upgrade(apps, schema_editor):
    """The segmenter and the folding now read traditional Chinese as simplified and a
    number's thousands separators as nothing: entity keys and alias keys folded again (華為
    is 华为), and the sections whose keyword text (page title, title, content) reads
    differently now indexed again."""
    Entity = apps.get_model("wiki", "Entity")
    refold_entity_keys(Entity)
    reindex_changed_text(
        apps.get_model("wiki", "PageSection"),
        corpus="wiki",
        text=lambda s: f"{s.page.title}\n{s.title}\n{s.content}",
        related=("page",),
        words=entity_words(Entity),
    )


class Migration(migrations.Migration):
    dependencies = [("wiki", "0009_entity_keys_refolded")]

    operations = [migrations.RunPython(upgrade, migrations.RunPython.noop)]
