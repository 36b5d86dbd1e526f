"""The skills app's tables.

Squashed: it replaces the app's earlier migrations, so a database that applied them is left as it
is and a new database is made in one step (tests/test_migrations.py)."""

import django.db.models.deletion
import simple_history.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("skills", "0001_initial"),
        ("skills", "0002_prompt_help_text"),
    ]

    dependencies = [
        ("almanac", "0001_squashed_0007_userprofile_username"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Skill",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.SlugField(max_length=100, unique=True)),
                ("version", models.CharField(default="1", max_length=40)),
                ("description", models.TextField(blank=True)),
                ("input_schema", models.JSONField(blank=True, default=dict)),
                ("output_schema", models.JSONField(blank=True, default=dict)),
                (
                    "prompt",
                    models.TextField(
                        blank=True,
                        help_text="Prompt-only skills: the system prompt. {field} names that input field; the values themselves go to the model as delimited data, never as instructions.",
                    ),
                ),
                (
                    "events",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text='Domain events this skill runs on, e.g. ["session.ended"].',
                    ),
                ),
                ("enabled", models.BooleanField(default=True)),
                ("builtin", models.BooleanField(default=False, editable=False)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="HistoricalSkill",
            fields=[
                (
                    "id",
                    models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name="ID"),
                ),
                ("name", models.SlugField(max_length=100)),
                ("version", models.CharField(default="1", max_length=40)),
                ("description", models.TextField(blank=True)),
                ("input_schema", models.JSONField(blank=True, default=dict)),
                ("output_schema", models.JSONField(blank=True, default=dict)),
                (
                    "prompt",
                    models.TextField(
                        blank=True,
                        help_text="Prompt-only skills: the system prompt. {field} names that input field; the values themselves go to the model as delimited data, never as instructions.",
                    ),
                ),
                (
                    "events",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text='Domain events this skill runs on, e.g. ["session.ended"].',
                    ),
                ),
                ("enabled", models.BooleanField(default=True)),
                ("builtin", models.BooleanField(default=False, editable=False)),
                ("created_at", models.DateTimeField(blank=True, editable=False)),
                ("updated_at", models.DateTimeField(blank=True, editable=False)),
                ("history_id", models.AutoField(primary_key=True, serialize=False)),
                ("history_date", models.DateTimeField(db_index=True)),
                ("history_change_reason", models.CharField(max_length=100, null=True)),
                (
                    "history_type",
                    models.CharField(
                        choices=[("+", "Created"), ("~", "Changed"), ("-", "Deleted")], max_length=1
                    ),
                ),
                (
                    "history_user",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "historical skill",
                "verbose_name_plural": "historical skills",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name="SkillRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("skill_name", models.CharField(max_length=100)),
                ("version", models.CharField(blank=True, max_length=40)),
                ("trigger", models.CharField(default="api", max_length=120)),
                (
                    "input_digest",
                    models.CharField(help_text="sha256 of the canonical JSON input", max_length=64),
                ),
                ("input", models.JSONField(blank=True, default=dict)),
                ("input_truncated", models.BooleanField(default=False)),
                ("output", models.JSONField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("success", "success"),
                            ("failed", "failed"),
                            ("fallback", "fallback (LLM failed, offline result)"),
                        ],
                        max_length=10,
                    ),
                ),
                ("used_llm", models.BooleanField(default=False)),
                ("attempts", models.PositiveSmallIntegerField(default=0, help_text="LLM requests made")),
                ("duration_ms", models.PositiveIntegerField(default=0)),
                ("error", models.TextField(blank=True)),
                (
                    "event_key",
                    models.CharField(blank=True, help_text="Event delivery id (bus runs)", max_length=64),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to="almanac.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(fields=["skill_name", "-created_at"], name="skills_run_skill_created"),
                    models.Index(fields=["status", "-created_at"], name="skills_run_status_created"),
                    models.Index(fields=["trigger", "-created_at"], name="skills_run_trigger_created"),
                    models.Index(fields=["input_digest"], name="skills_run_digest"),
                    models.Index(
                        condition=models.Q(("event_key", ""), _negated=True),
                        fields=["event_key"],
                        name="skills_run_event_key",
                    ),
                ],
            },
        ),
    ]
