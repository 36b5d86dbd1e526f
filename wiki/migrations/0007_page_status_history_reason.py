# Page history rows of status changes said "issue open" / "issue closed": staff who may not
# see a project's status read it there. They now all say "issue status" (the row is hidden
# from staff who are not superusers; superusers see the status field itself).

from django.db import migrations


def neutral(apps, schema_editor):
    apps.get_model("wiki", "HistoricalPage").objects.filter(
        history_change_reason__in=["issue open", "issue closed"]
    ).update(history_change_reason="issue status")


class Migration(migrations.Migration):
    dependencies = [("wiki", "0006_page_status_container")]

    operations = [migrations.RunPython(neutral, migrations.RunPython.noop)]
