import hashlib
import json

from django.db import migrations


def _digest(event) -> str:
    # A copy of Event.content_digest as it was when this migration was written.
    parts = [event.kind, event.author, event.title, event.text, event.tags, event.url, event.thread_key]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def fill_digest(apps, schema_editor):
    Event = apps.get_model("connectors", "Event")
    fields = ["id", "kind", "author", "title", "text", "tags", "url", "thread_key"]
    batch = []
    for event in Event.objects.filter(digest="").only(*fields).iterator(chunk_size=500):
        event.digest = _digest(event)
        batch.append(event)
        if len(batch) >= 500:
            Event.objects.bulk_update(batch, ["digest"])
            batch = []
    if batch:
        Event.objects.bulk_update(batch, ["digest"])


class Migration(migrations.Migration):
    dependencies = [
        ("connectors", "0002_membership_clock_event_digest"),
    ]

    operations = [
        migrations.RunPython(fill_digest, migrations.RunPython.noop),
    ]
