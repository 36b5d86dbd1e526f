"""`kind` of the memories written before it existed, from what the database alone tells:
compression summaries are `summary`, episodic memories `event`, the extractor's
`meta.fact_type` (preference, decision) where it recorded one; the rest stay `fact` (the
column's default). What only the text tells (以后…都…, "I prefer") is read by the schema
upgrade to version 2 (`memories.versions`): on every read, and written back by
`memory_upgrade_task`. The rows stay at schema_version 1 until then."""

from django.db import migrations


def fill_kind(apps, schema_editor):
    Memory = apps.get_model("memories", "Memory")
    HistoricalMemory = apps.get_model("memories", "HistoricalMemory")
    for model in (Memory, HistoricalMemory):
        model.objects.filter(meta__source="compression").update(kind="summary")
        model.objects.filter(memory_type="episodic").exclude(meta__source="compression").update(kind="event")
        for fact_type in ("preference", "decision"):
            model.objects.filter(memory_type="semantic", meta__fact_type=fact_type).exclude(
                meta__source="compression"
            ).update(kind=fact_type)


class Migration(migrations.Migration):
    dependencies = [("memories", "0010_kind_superseded_audit_text")]

    operations = [migrations.RunPython(fill_kind, migrations.RunPython.noop)]
