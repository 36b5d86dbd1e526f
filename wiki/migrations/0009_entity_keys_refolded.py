from django.db import migrations

from wiki.migration_helpers import refold_entity_keys


def refold(apps, schema_editor):
    """Entity keys as the folding of this release makes them (a region in a Chinese legal
    name, a singular "Holding")."""
    refold_entity_keys(apps.get_model("wiki", "Entity"))


class Migration(migrations.Migration):
    dependencies = [("wiki", "0008_entity_named_in")]

    operations = [migrations.RunPython(refold, migrations.RunPython.noop)]
