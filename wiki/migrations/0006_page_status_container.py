# A project page's status is read only by those who may read the container whose issue set
# it. Pages that already have a status get the container of the newest issue event among
# their sections' events; a page where none is found shows its status to no reader until
# its next issue event is compiled (fails closed).

from django.db import migrations, models

ISSUE_KINDS = ["issue", "issue_closed", "pull_request"]


def backfill(apps, schema_editor):
    Page = apps.get_model("wiki", "Page")
    PageSection = apps.get_model("wiki", "PageSection")
    Event = apps.get_model("connectors", "Event")
    for page in Page.objects.exclude(status="active").iterator():
        ids = [i for ids in PageSection.objects.filter(page=page).values_list("event_ids", flat=True) for i in ids]
        newest = (
            Event.objects.filter(id__in=ids, kind__in=ISSUE_KINDS)
            .order_by("-occurred_at", "-id")
            .values_list("container_key", flat=True)
            .first()
        )
        if newest:
            Page.objects.filter(pk=page.pk).update(status_container=newest)


class Migration(migrations.Migration):
    dependencies = [
        ("wiki", "0005_acl_search_gin_no_fastupdate"),
        ("connectors", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalpage",
            name="status_container",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name="page",
            name="status_container",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
