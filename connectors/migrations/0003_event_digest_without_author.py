# The first digests (0002's code, for a few hours) included the author, which a Slack
# webhook and a poller name differently: such a digest would make a re-read a new version.
# A blank digest compares as equal to any content (the behaviour before digests), so the
# ones written so far are cleared; new events get the digest without the author.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("connectors", "0002_membership_clock_event_digest")]

    operations = [
        migrations.RunSQL(
            "UPDATE connectors_event SET digest = '' WHERE digest <> ''", migrations.RunSQL.noop
        )
    ]
