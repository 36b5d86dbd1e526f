"""The connectors app's tables.

Squashed: it replaces the app's earlier migrations, so a database that applied them is left as it
is and a new database is made in one step (tests/test_migrations.py)."""

import connectors.models
import django.contrib.postgres.fields
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("connectors", "0001_initial"),
        ("connectors", "0002_membership_clock_event_digest"),
        ("connectors", "0003_event_digest_without_author"),
    ]

    dependencies = [
        ("almanac", "0001_squashed_0007_userprofile_username"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Source",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("slack", "Slack"),
                            ("email", "Email"),
                            ("calendar", "Calendar"),
                            ("notes", "Notes"),
                            ("github", "Github"),
                            ("push", "Push"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "name",
                    models.CharField(
                        help_text="the `source` field of events, e.g. slack",
                        max_length=100,
                        validators=[connectors.models.validate_source_name],
                    ),
                ),
                (
                    "config",
                    models.JSONField(
                        blank=True, default=dict, help_text="non-secret settings: URLs, channels, folders"
                    ),
                ),
                (
                    "credentials",
                    models.TextField(
                        blank=True,
                        help_text="encrypted with CONNECTOR_SECRET_KEY, or env:VAR_NAME to read it from the environment",
                    ),
                ),
                ("enabled", models.BooleanField(default=True)),
                ("poll_minutes", models.PositiveIntegerField(default=5)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="sources",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="Event",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("external_id", models.CharField(max_length=500)),
                ("version", models.PositiveIntegerField(default=1)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("message", "Message"),
                            ("message_changed", "Message Changed"),
                            ("message_deleted", "Message Deleted"),
                            ("email", "Email"),
                            ("email_recalled", "Email Recalled"),
                            ("calendar_event", "Calendar Event"),
                            ("meeting_note", "Meeting Note"),
                            ("issue", "Issue"),
                            ("issue_closed", "Issue Closed"),
                            ("pull_request", "Pull Request"),
                            ("membership_added", "Membership Added"),
                            ("membership_removed", "Membership Removed"),
                        ],
                        max_length=32,
                    ),
                ),
                ("occurred_at", models.DateTimeField()),
                ("container_key", models.CharField(max_length=300)),
                ("container_name", models.CharField(blank=True, max_length=300)),
                (
                    "container_members",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300), blank=True, null=True, size=None
                    ),
                ),
                ("container_public", models.BooleanField(default=False)),
                ("thread_key", models.CharField(blank=True, max_length=500)),
                ("author", models.CharField(blank=True, max_length=300)),
                ("title", models.CharField(blank=True, max_length=500)),
                ("text", models.TextField(blank=True)),
                ("tags", models.JSONField(blank=True, default=dict)),
                ("url", models.CharField(blank=True, max_length=1000)),
                ("raw", models.JSONField(blank=True, default=dict)),
                (
                    "digest",
                    models.CharField(
                        blank=True,
                        editable=False,
                        help_text="of the content, see Event.content_digest",
                        max_length=32,
                    ),
                ),
                ("received_at", models.DateTimeField(auto_now_add=True)),
                (
                    "state",
                    models.CharField(
                        choices=[("pending", "Pending"), ("compiled", "Compiled"), ("failed", "Failed")],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("compiled_at", models.DateTimeField(blank=True, null=True)),
                ("error", models.TextField(blank=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="almanac.tenant",
                    ),
                ),
                (
                    "source",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="connectors.source",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="SyncCursor",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("cursor", models.JSONField(blank=True, default=dict)),
                ("last_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("last_success_at", models.DateTimeField(blank=True, null=True)),
                ("backoff_until", models.DateTimeField(blank=True, null=True)),
                ("consecutive_failures", models.PositiveIntegerField(default=0)),
                ("last_error", models.TextField(blank=True)),
                (
                    "source",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="cursor",
                        to="connectors.source",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="ExternalIdentity",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("source_kind", models.CharField(max_length=16)),
                ("handle", models.CharField(max_length=300)),
                ("display_name", models.CharField(blank=True, max_length=300)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="external_identities",
                        to="almanac.tenant",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="external_identities",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "source_kind", "handle"),
                        name="connectors_externalidentity_unique_handle",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="MembershipClock",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("origin", models.CharField(max_length=64)),
                ("at", models.DateTimeField()),
                (
                    "members_digest",
                    models.CharField(blank=True, help_text="of the member list applied", max_length=32),
                ),
                (
                    "group",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="membership_clocks",
                        to="almanac.accessgroup",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("group", "origin", "user"),
                        name="connectors_membershipclock_unique_clock",
                        nulls_distinct=False,
                    )
                ],
            },
        ),
        migrations.AddConstraint(
            model_name="source",
            constraint=models.UniqueConstraint(
                fields=("tenant", "name"), name="connectors_source_unique_name"
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(fields=["source", "external_id"], name="connectors_event_item_idx"),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(("state", "pending")),
                fields=["received_at"],
                name="connectors_event_pending_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(fields=["tenant", "thread_key"], name="connectors_event_thread_idx"),
        ),
        migrations.AddConstraint(
            model_name="event",
            constraint=models.UniqueConstraint(
                fields=("source", "external_id", "version"), name="connectors_event_unique_version"
            ),
        ),
    ]
