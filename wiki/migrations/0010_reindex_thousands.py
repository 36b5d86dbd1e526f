from django.db import migrations

from almanac.migration_helpers import reindex_thousands


def reindex(apps, schema_editor):
    """Sections that write a number with thousands separators, indexed again (see memories
    0009); a section's keyword text is its page's title, its title and its content."""
    PageSection = apps.get_model("wiki", "PageSection")
    reindex_thousands(
        PageSection,
        corpus="wiki",
        text=lambda s: f"{s.page.title}\n{s.title}\n{s.content}",
        fields=("content", "title"),
        related=("page",),
    )


class Migration(migrations.Migration):
    dependencies = [("wiki", "0009_entity_keys_refolded")]

    operations = [migrations.RunPython(reindex, migrations.RunPython.noop)]
