"""The memories app's tables.

Squashed: it replaces the app's earlier migrations, so a database that applied them is left as it
is and a new database is made in one step (tests/test_migrations.py)."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
import pgvector.django.indexes
import pgvector.django.vector
import simple_history.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("memories", "0001_initial"),
        ("memories", "0002_plain_embedding_storage"),
        ("memories", "0003_external_embedding_storage"),
        ("memories", "0004_acl_is_scope_key"),
        ("memories", "0005_acl_search_gin"),
        ("memories", "0006_memory_fillfactor"),
        ("memories", "0007_acl_search_gin_no_fastupdate"),
        ("memories", "0008_memory_owner_set_null"),
        ("memories", "0009_index_traditional_and_thousands"),
        ("memories", "0010_kind_superseded_audit_text"),
        ("memories", "0011_fill_kind"),
        ("memories", "0012_needs_review"),
    ]

    dependencies = [
        ("almanac", "0001_squashed_0007_userprofile_username"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ConversationSession",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("title", models.CharField(blank=True, max_length=300)),
                (
                    "status",
                    models.CharField(
                        choices=[("open", "Open"), ("ended", "Ended")], default="open", max_length=16
                    ),
                ),
                (
                    "turn_count",
                    models.PositiveIntegerField(default=0, help_text="turns added (summaries not counted)"),
                ),
                ("started_at", models.DateTimeField(auto_now_add=True)),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                (
                    "extracted_at",
                    models.DateTimeField(blank=True, help_text="when memory extraction finished", null=True),
                ),
                ("meta", models.JSONField(blank=True, default=dict)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="conversation_sessions",
                        to="almanac.tenant",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="conversation_sessions",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="Memory",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "scope",
                    models.CharField(
                        choices=[
                            ("user", "User"),
                            ("dept", "Dept"),
                            ("project", "Project"),
                            ("tenant", "Tenant"),
                        ],
                        default="user",
                        max_length=16,
                    ),
                ),
                (
                    "scope_key",
                    models.CharField(
                        help_text="username, department/project key or tenant slug", max_length=200
                    ),
                ),
                (
                    "memory_type",
                    models.CharField(
                        choices=[("working", "Working"), ("episodic", "Episodic"), ("semantic", "Semantic")],
                        default="semantic",
                        max_length=16,
                    ),
                ),
                ("content", models.TextField()),
                ("embedding", pgvector.django.vector.VectorField(dimensions=512)),
                ("tokens", models.TextField(blank=True, default="")),
                ("tf", models.JSONField(blank=True, default=dict)),
                ("doc_len", models.IntegerField(default=0)),
                (
                    "search_vector",
                    models.GeneratedField(
                        db_persist=True,
                        expression=models.Func(
                            models.Func(models.F("tokens"), models.Value(" "), function="string_to_array"),
                            function="array_to_tsvector",
                            output_field=django.contrib.postgres.search.SearchVectorField(),
                        ),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                    ),
                ),
                ("importance", models.FloatField(default=0.5)),
                ("access_count", models.PositiveIntegerField(default=0)),
                ("last_access", models.DateTimeField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("compressed", "Compressed"),
                            ("archived", "Archived"),
                            ("superseded", "Superseded"),
                        ],
                        default="active",
                        max_length=16,
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("fact", "Fact"),
                            ("preference", "Preference"),
                            ("decision", "Decision"),
                            ("event", "Event"),
                            ("clause", "Clause"),
                            ("summary", "Summary"),
                        ],
                        default="fact",
                        max_length=16,
                    ),
                ),
                ("fact_key", models.CharField(blank=True, default="", max_length=200)),
                ("quality", models.FloatField(default=1.0)),
                ("needs_review", models.BooleanField(default=False)),
                ("schema_version", models.PositiveSmallIntegerField(default=2)),
                (
                    "occurred_at",
                    models.DateField(
                        blank=True, help_text="for episodic memories: when it happened", null=True
                    ),
                ),
                (
                    "meta",
                    models.JSONField(blank=True, default=dict, help_text="source session, document, tags"),
                ),
                (
                    "acl",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300),
                        help_text="access-group keys, derived from the scope",
                        size=None,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "owner",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="memories",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "superseded_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="supersedes",
                        to="memories.memory",
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memories",
                        to="almanac.tenant",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "memories",
            },
        ),
        migrations.CreateModel(
            name="HistoricalMemory",
            fields=[
                (
                    "id",
                    models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name="ID"),
                ),
                (
                    "scope",
                    models.CharField(
                        choices=[
                            ("user", "User"),
                            ("dept", "Dept"),
                            ("project", "Project"),
                            ("tenant", "Tenant"),
                        ],
                        default="user",
                        max_length=16,
                    ),
                ),
                (
                    "scope_key",
                    models.CharField(
                        help_text="username, department/project key or tenant slug", max_length=200
                    ),
                ),
                (
                    "memory_type",
                    models.CharField(
                        choices=[("working", "Working"), ("episodic", "Episodic"), ("semantic", "Semantic")],
                        default="semantic",
                        max_length=16,
                    ),
                ),
                ("content", models.TextField()),
                ("importance", models.FloatField(default=0.5)),
                ("access_count", models.PositiveIntegerField(default=0)),
                ("last_access", models.DateTimeField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("compressed", "Compressed"),
                            ("archived", "Archived"),
                            ("superseded", "Superseded"),
                        ],
                        default="active",
                        max_length=16,
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("fact", "Fact"),
                            ("preference", "Preference"),
                            ("decision", "Decision"),
                            ("event", "Event"),
                            ("clause", "Clause"),
                            ("summary", "Summary"),
                        ],
                        default="fact",
                        max_length=16,
                    ),
                ),
                ("fact_key", models.CharField(blank=True, default="", max_length=200)),
                ("quality", models.FloatField(default=1.0)),
                ("needs_review", models.BooleanField(default=False)),
                ("schema_version", models.PositiveSmallIntegerField(default=2)),
                (
                    "occurred_at",
                    models.DateField(
                        blank=True, help_text="for episodic memories: when it happened", null=True
                    ),
                ),
                (
                    "meta",
                    models.JSONField(blank=True, default=dict, help_text="source session, document, tags"),
                ),
                (
                    "acl",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300),
                        help_text="access-group keys, derived from the scope",
                        size=None,
                    ),
                ),
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
                (
                    "owner",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="almanac.tenant",
                    ),
                ),
                (
                    "superseded_by",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="memories.memory",
                    ),
                ),
            ],
            options={
                "verbose_name": "historical memory",
                "verbose_name_plural": "historical memories",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name="Feedback",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "signal",
                    models.CharField(
                        choices=[("adopted", "Adopted"), ("ignored", "Ignored"), ("corrected", "Corrected")],
                        max_length=16,
                    ),
                ),
                ("quality_before", models.FloatField()),
                ("quality_after", models.FloatField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memory_feedback",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "memory",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="feedback",
                        to="memories.memory",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "feedback",
            },
        ),
        migrations.CreateModel(
            name="MemoryAuditText",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("memory_id", models.BigIntegerField()),
                ("before", models.TextField(blank=True, default="")),
                ("after", models.TextField(blank=True, default="")),
                (
                    "event",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="almanac.auditevent",
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="almanac.tenant"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="MemoryLink",
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
                            ("duplicate_of", "Duplicate Of"),
                            ("compressed_into", "Compressed Into"),
                            ("derived_from", "Derived From"),
                        ],
                        max_length=32,
                    ),
                ),
                ("meta", models.JSONField(blank=True, default=dict)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "source",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="links_out",
                        to="memories.memory",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="links_in",
                        to="memories.memory",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="SessionChunk",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("digest", models.CharField(max_length=64)),
                ("position", models.PositiveIntegerField()),
                (
                    "outcome",
                    models.CharField(
                        choices=[("extracted", "Extracted"), ("covered", "Covered")], max_length=16
                    ),
                ),
                ("facts", models.PositiveIntegerField(default=0)),
                ("memories_written", models.PositiveIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="chunks",
                        to="memories.conversationsession",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="Turn",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("order", models.PositiveIntegerField()),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("user", "User"),
                            ("assistant", "Assistant"),
                            ("tool", "Tool"),
                            ("summary", "Summary"),
                        ],
                        max_length=16,
                    ),
                ),
                ("content", models.TextField()),
                ("tokens", models.PositiveIntegerField(default=0)),
                (
                    "folded",
                    models.BooleanField(default=False, help_text="folded into a (later) summary turn"),
                ),
                ("meta", models.JSONField(blank=True, default=dict)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="turns",
                        to="memories.conversationsession",
                    ),
                ),
            ],
            options={
                "ordering": ["session", "order"],
            },
        ),
        migrations.AddIndex(
            model_name="conversationsession",
            index=models.Index(fields=["user", "-started_at"], name="memories_session_user_started"),
        ),
        migrations.AddConstraint(
            model_name="conversationsession",
            constraint=models.CheckConstraint(
                condition=models.Q(("status__in", ["open", "ended"])),
                name="memories_conversationsession_status_valid",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=pgvector.django.indexes.HnswIndex(
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="memories_memory_embedding_hnsw",
                opclasses=["vector_cosine_ops"],
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=django.contrib.postgres.indexes.GinIndex(
                fastupdate=False, fields=["acl", "search_vector"], name="memories_memory_acl_search_gin"
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                fields=["tenant", "status", "memory_type"], name="memories_memory_tenant_status"
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["owner", "-created_at"], name="memories_memory_owner_created"),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("status", "active"), models.Q(("fact_key", ""), _negated=True)),
                fields=["tenant", "fact_key"],
                name="memories_memory_active_key",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("needs_review", True)),
                fields=["tenant", "created_at"],
                name="memories_memory_needs_review",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["schema_version", "id"], name="memories_memory_schema_version"),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("importance__gte", 0), ("importance__lte", 1)),
                name="memories_memory_importance_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("quality__gte", 0.2), ("quality__lte", 2.0)),
                name="memories_memory_quality_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("scope__in", ["user", "dept", "project", "tenant"])),
                name="memories_memory_scope_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("memory_type__in", ["working", "episodic", "semantic"])),
                name="memories_memory_type_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("status__in", ["active", "compressed", "archived", "superseded"])),
                name="memories_memory_status_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("kind__in", ["fact", "preference", "decision", "event", "clause", "summary"])
                ),
                name="memories_memory_kind_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("superseded_by__isnull", True), ("status", "superseded"), _connector="OR"
                ),
                name="memories_memory_superseded_by_status",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("acl", []), _negated=True), name="memories_memory_acl_not_empty"
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("acl__len", 1), ("acl__0__regex", "^(user|dept|project|tenant):")),
                name="memories_memory_acl_is_scope_key",
            ),
        ),
        migrations.AddIndex(
            model_name="feedback",
            index=models.Index(fields=["memory", "-created_at"], name="memories_feedback_memory"),
        ),
        migrations.AddConstraint(
            model_name="feedback",
            constraint=models.CheckConstraint(
                condition=models.Q(("signal__in", ["adopted", "ignored", "corrected"])),
                name="memories_feedback_signal_valid",
            ),
        ),
        migrations.AddIndex(
            model_name="memoryaudittext",
            index=models.Index(fields=["tenant", "memory_id"], name="memories_audittext_memory"),
        ),
        migrations.AddConstraint(
            model_name="memorylink",
            constraint=models.UniqueConstraint(
                fields=("source", "target", "kind"), name="memories_memorylink_unique_link"
            ),
        ),
        migrations.AddConstraint(
            model_name="memorylink",
            constraint=models.CheckConstraint(
                condition=models.Q(("source", models.F("target")), _negated=True),
                name="memories_memorylink_not_self",
            ),
        ),
        migrations.AddConstraint(
            model_name="sessionchunk",
            constraint=models.UniqueConstraint(
                fields=("session", "digest"), name="memories_sessionchunk_unique_digest"
            ),
        ),
        migrations.AddIndex(
            model_name="turn",
            index=models.Index(
                condition=models.Q(("folded", False)),
                fields=["session", "order"],
                name="memories_turn_unfolded",
            ),
        ),
        migrations.AddConstraint(
            model_name="turn",
            constraint=models.UniqueConstraint(
                fields=("session", "order"), name="memories_turn_unique_order"
            ),
        ),
        migrations.AddConstraint(
            model_name="turn",
            constraint=models.CheckConstraint(
                condition=models.Q(("role__in", ["user", "assistant", "tool", "summary"])),
                name="memories_turn_role_valid",
            ),
        ),
        # Free space in every heap page, so recall hit counting (access_count/last_access)
        # updates rows in place as HOT updates (docs/operations.md).
        migrations.RunSQL(
            "ALTER TABLE memories_memory SET (fillfactor = 80)",
            reverse_sql="ALTER TABLE memories_memory RESET (fillfactor)",
        ),
    ]
