from django.db import migrations

from almanac.migration_helpers import refold_entity_keys, reindex_changed_text


def upgrade(apps, schema_editor):
    """The segmenter and the folding now read traditional Chinese as simplified and a
    number's thousands separators as nothing: entity keys folded again (華為 is 华为), and
    the sections that write either indexed again (a section's keyword text is its page's
    title, its title and its content)."""
    Entity = apps.get_model("wiki", "Entity")
    refold_entity_keys(Entity)
    reindex_changed_text(
        apps.get_model("wiki", "PageSection"),
        corpus="wiki",
        text=lambda s: f"{s.page.title}\n{s.title}\n{s.content}",
        fields=("content", "title"),
        related=("page",),
        words=list(Entity.objects.values_list("name", flat=True)),
    )


class Migration(migrations.Migration):
    dependencies = [("wiki", "0009_entity_keys_refolded")]

    operations = [migrations.RunPython(upgrade, migrations.RunPython.noop)]
