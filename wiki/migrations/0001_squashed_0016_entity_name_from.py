"""The wiki app's tables.

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
        ("wiki", "0001_initial"),
        ("wiki", "0002_section_container_index"),
        ("wiki", "0003_section_stale_index"),
        ("wiki", "0004_section_acl_search_gin"),
        ("wiki", "0005_acl_search_gin_no_fastupdate"),
        ("wiki", "0006_page_status_container"),
        ("wiki", "0007_page_status_history_reason"),
        ("wiki", "0008_entity_named_in"),
        ("wiki", "0009_entity_keys_refolded"),
        ("wiki", "0010_fold_and_index_traditional_and_thousands"),
        ("wiki", "0011_section_work_page_status_manual"),
        ("wiki", "0012_fill_section_work"),
        ("wiki", "0013_steward"),
        ("wiki", "0014_rebuild"),
        ("wiki", "0015_entity_name_at"),
        ("wiki", "0016_entity_name_from"),
    ]

    dependencies = [
        ("almanac", "0001_squashed_0007_userprofile_username"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Entity",
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
                            ("customer", "Customer"),
                            ("project", "Project"),
                            ("person", "Person"),
                            ("topic", "Topic"),
                        ],
                        max_length=16,
                    ),
                ),
                ("name", models.CharField(max_length=300)),
                (
                    "key",
                    models.CharField(help_text="folded name (case, width, legal suffixes)", max_length=300),
                ),
                (
                    "aliases",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300), blank=True, default=list, size=None
                    ),
                ),
                (
                    "alias_keys",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300),
                        blank=True,
                        default=list,
                        help_text="folded name and aliases",
                        size=None,
                    ),
                ),
                (
                    "named_in",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300), blank=True, default=list, size=None
                    ),
                ),
                (
                    "name_from",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("", "a person or the directory"),
                            ("public", "a tag where the whole tenant reads"),
                            ("private", "a tag in a private container"),
                        ],
                        default="",
                        max_length=8,
                    ),
                ),
                ("name_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="wiki_entities",
                        to="almanac.tenant",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="wiki_entities",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "entities",
            },
        ),
        migrations.CreateModel(
            name="HistoricalPage",
            fields=[
                (
                    "id",
                    models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name="ID"),
                ),
                ("slug", models.CharField(max_length=200)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("customer", "Customer"),
                            ("project", "Project"),
                            ("person", "Person"),
                            ("topic", "Topic"),
                        ],
                        max_length=16,
                    ),
                ),
                ("title", models.CharField(max_length=300)),
                (
                    "status",
                    models.CharField(
                        choices=[("active", "Active"), ("open", "Open"), ("closed", "Closed")],
                        default="active",
                        max_length=16,
                    ),
                ),
                (
                    "status_at",
                    models.DateTimeField(
                        blank=True, help_text="event time of the last status change", null=True
                    ),
                ),
                ("status_container", models.CharField(blank=True, max_length=300)),
                (
                    "status_manual",
                    models.CharField(
                        blank=True,
                        choices=[("active", "Active"), ("open", "Open"), ("closed", "Closed")],
                        max_length=16,
                    ),
                ),
                ("status_manual_at", models.DateTimeField(blank=True, null=True)),
                ("status_manual_by", models.CharField(blank=True, max_length=150)),
                ("summary", models.TextField(blank=True)),
                (
                    "summary_digest",
                    models.CharField(
                        blank=True, help_text="digest of the sections summarized", max_length=64
                    ),
                ),
                (
                    "summary_section_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), blank=True, default=list, size=None
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
                    "entity",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="wiki.entity",
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
            ],
            options={
                "verbose_name": "historical page",
                "verbose_name_plural": "historical pages",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name="Page",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("slug", models.CharField(max_length=200)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("customer", "Customer"),
                            ("project", "Project"),
                            ("person", "Person"),
                            ("topic", "Topic"),
                        ],
                        max_length=16,
                    ),
                ),
                ("title", models.CharField(max_length=300)),
                (
                    "status",
                    models.CharField(
                        choices=[("active", "Active"), ("open", "Open"), ("closed", "Closed")],
                        default="active",
                        max_length=16,
                    ),
                ),
                (
                    "status_at",
                    models.DateTimeField(
                        blank=True, help_text="event time of the last status change", null=True
                    ),
                ),
                ("status_container", models.CharField(blank=True, max_length=300)),
                (
                    "status_manual",
                    models.CharField(
                        blank=True,
                        choices=[("active", "Active"), ("open", "Open"), ("closed", "Closed")],
                        max_length=16,
                    ),
                ),
                ("status_manual_at", models.DateTimeField(blank=True, null=True)),
                ("status_manual_by", models.CharField(blank=True, max_length=150)),
                ("summary", models.TextField(blank=True)),
                (
                    "summary_digest",
                    models.CharField(
                        blank=True, help_text="digest of the sections summarized", max_length=64
                    ),
                ),
                (
                    "summary_section_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), blank=True, default=list, size=None
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "entity",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="page", to="wiki.entity"
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="wiki_pages",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="HistoricalPageSection",
            fields=[
                (
                    "id",
                    models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name="ID"),
                ),
                ("thread_key", models.CharField(max_length=500)),
                ("container_key", models.CharField(max_length=300)),
                ("container_name", models.CharField(blank=True, max_length=300)),
                ("title", models.CharField(blank=True, max_length=500)),
                ("content", models.TextField()),
                ("content_digest", models.CharField(blank=True, max_length=64)),
                ("occurred_at", models.DateTimeField()),
                (
                    "acl",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300), default=list, size=None
                    ),
                ),
                (
                    "authors",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300), blank=True, default=list, size=None
                    ),
                ),
                (
                    "event_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        blank=True,
                        default=list,
                        help_text="provenance",
                        size=None,
                    ),
                ),
                (
                    "source_list",
                    models.JSONField(blank=True, default=list, help_text="[{source, url, occurred_at}]"),
                ),
                ("stale", models.BooleanField(default=False)),
                ("stale_reason", models.CharField(blank=True, max_length=300)),
                (
                    "recall_event_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), blank=True, default=list, size=None
                    ),
                ),
                (
                    "confirmed_recall_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), blank=True, default=list, size=None
                    ),
                ),
                (
                    "work_kind",
                    models.CharField(
                        blank=True,
                        choices=[("", "none"), ("issue", "Issue"), ("pull_request", "Pull Request")],
                        default="",
                        max_length=16,
                    ),
                ),
                ("work_open", models.BooleanField(blank=True, null=True)),
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
                    "page",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="wiki.page",
                    ),
                ),
            ],
            options={
                "verbose_name": "historical page section",
                "verbose_name_plural": "historical page sections",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name="PageSection",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("thread_key", models.CharField(max_length=500)),
                ("container_key", models.CharField(max_length=300)),
                ("container_name", models.CharField(blank=True, max_length=300)),
                ("title", models.CharField(blank=True, max_length=500)),
                ("content", models.TextField()),
                ("content_digest", models.CharField(blank=True, max_length=64)),
                ("occurred_at", models.DateTimeField()),
                (
                    "acl",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300), default=list, size=None
                    ),
                ),
                (
                    "authors",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=300), blank=True, default=list, size=None
                    ),
                ),
                (
                    "event_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        blank=True,
                        default=list,
                        help_text="provenance",
                        size=None,
                    ),
                ),
                (
                    "source_list",
                    models.JSONField(blank=True, default=list, help_text="[{source, url, occurred_at}]"),
                ),
                ("stale", models.BooleanField(default=False)),
                ("stale_reason", models.CharField(blank=True, max_length=300)),
                (
                    "recall_event_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), blank=True, default=list, size=None
                    ),
                ),
                (
                    "confirmed_recall_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), blank=True, default=list, size=None
                    ),
                ),
                (
                    "work_kind",
                    models.CharField(
                        blank=True,
                        choices=[("", "none"), ("issue", "Issue"), ("pull_request", "Pull Request")],
                        default="",
                        max_length=16,
                    ),
                ),
                ("work_open", models.BooleanField(blank=True, null=True)),
                ("embedding", pgvector.django.vector.VectorField(blank=True, dimensions=512, null=True)),
                ("tokens", models.TextField(blank=True)),
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
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "page",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="sections", to="wiki.page"
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
            name="Rebuild",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "page_slug",
                    models.CharField(blank=True, help_text="empty: the whole tenant", max_length=200),
                ),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                        ],
                        default="queued",
                        max_length=16,
                    ),
                ),
                ("events_total", models.IntegerField(default=0)),
                ("events_done", models.IntegerField(default=0)),
                ("threads_total", models.IntegerField(default=0)),
                ("threads_done", models.IntegerField(default=0)),
                ("error", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="wiki_rebuilds",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="Steward",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "container_key",
                    models.CharField(help_text="a container key, or a prefix ending in *", max_length=300),
                ),
                ("note", models.CharField(blank=True, max_length=300)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="wiki_stewards",
                        to="almanac.tenant",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="wiki_stewardships",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.AddIndex(
            model_name="entity",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["alias_keys"], name="wiki_entity_alias_keys_gin"
            ),
        ),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.UniqueConstraint(
                fields=("tenant", "kind", "key"), name="wiki_entity_unique_key"
            ),
        ),
        migrations.AddIndex(
            model_name="page",
            index=models.Index(fields=["tenant", "kind"], name="wiki_page_kind_idx"),
        ),
        migrations.AddConstraint(
            model_name="page",
            constraint=models.UniqueConstraint(fields=("tenant", "slug"), name="wiki_page_unique_slug"),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=django.contrib.postgres.indexes.GinIndex(
                fastupdate=False, fields=["acl", "search_vector"], name="wiki_section_acl_search_gin"
            ),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["authors"], name="wiki_section_authors_gin"
            ),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=pgvector.django.indexes.HnswIndex(
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="wiki_section_embedding_hnsw",
                opclasses=["vector_cosine_ops"],
            ),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=models.Index(fields=["tenant", "thread_key"], name="wiki_section_thread_idx"),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=models.Index(
                fields=["tenant", "container_key", "occurred_at"], name="wiki_section_container_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=models.Index(fields=["page", "occurred_at"], name="wiki_section_page_time_idx"),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=models.Index(
                condition=models.Q(("stale", True)), fields=["page"], name="wiki_section_stale_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="pagesection",
            index=models.Index(
                condition=models.Q(("work_kind", ""), _negated=True),
                fields=["page"],
                name="wiki_section_work_idx",
            ),
        ),
        migrations.AddConstraint(
            model_name="pagesection",
            constraint=models.UniqueConstraint(
                fields=("page", "thread_key", "container_key"), name="wiki_pagesection_unique_thread"
            ),
        ),
        migrations.AddIndex(
            model_name="rebuild",
            index=models.Index(fields=["tenant", "created_at"], name="wiki_rebuild_tenant_idx"),
        ),
        migrations.AddConstraint(
            model_name="steward",
            constraint=models.UniqueConstraint(
                fields=("tenant", "user", "container_key"), name="wiki_steward_unique_steward"
            ),
        ),
    ]
