"""The base app's tables, the audit log's database rules and the vector extension.

Squashed: it replaces the app's earlier migrations, so a database that applied them is left as it
is and a new database is made in one step (tests/test_migrations.py)."""

import almanac.models
import django.db.models.deletion
import django.db.models.functions.datetime
from django.conf import settings
from django.db import migrations, models
from pgvector.django import VectorExtension


# Row-level UPDATE/DELETE of the audit log are refused. TRUNCATE (table-owner only; used by
# test flushes) is not: in production, run the app as a role that does not own the table.
APPEND_ONLY = """
CREATE OR REPLACE FUNCTION almanac_audit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'almanac_auditevent is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER almanac_audit_no_update BEFORE UPDATE OR DELETE ON almanac_auditevent
    FOR EACH ROW EXECUTE FUNCTION almanac_audit_append_only();
"""

# The audit log is a hash chain (docs/operations.md, "Audit log"): a BEFORE INSERT trigger,
# owned by the role that runs the migrations, numbers each row in its tenant's chain, stamps it
# with the database clock and digests it with the row before it (almanac.services.audit).
DIGEST = """
CREATE OR REPLACE FUNCTION almanac_audit_digest(
    seq bigint, id bigint, tenant_id bigint, actor text, action text, object_type text,
    object_id text, detail jsonb, created_at timestamptz, prev_digest text
) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT encode(sha256(convert_to(string_agg(length(f) || ':' || f, '' ORDER BY n), 'UTF8')), 'hex')
    FROM unnest(ARRAY[
        seq::text, id::text, coalesce(tenant_id::text, ''), actor, action, object_type, object_id,
        detail::text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), prev_digest
    ]) WITH ORDINALITY AS t(f, n)
$$;
"""

# Appends to one chain are serialised by a transaction-scoped advisory lock, taken before
# the head is read. Table names come from the trigger's own relation, so a same-named
# temporary table cannot stand in for the chain.
CHAIN = """
CREATE OR REPLACE FUNCTION almanac_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head_seq bigint;
    head_digest text;
BEGIN
    PERFORM pg_advisory_xact_lock(
        hashtextextended('almanac_audit_chain:' || coalesce(NEW.tenant_id::text, 'global'), 0)
    );
    IF NEW.tenant_id IS NULL THEN
        EXECUTE format(
            'SELECT seq, digest FROM %I.%I WHERE tenant_id IS NULL ORDER BY seq DESC LIMIT 1',
            TG_TABLE_SCHEMA, TG_TABLE_NAME
        ) INTO head_seq, head_digest;
    ELSE
        EXECUTE format(
            'SELECT seq, digest FROM %I.%I WHERE tenant_id = $1 ORDER BY seq DESC LIMIT 1',
            TG_TABLE_SCHEMA, TG_TABLE_NAME
        ) INTO head_seq, head_digest USING NEW.tenant_id;
    END IF;
    NEW.seq := coalesce(head_seq, 0) + 1;
    NEW.prev_digest := coalesce(head_digest, '');
    NEW.created_at := clock_timestamp();
    NEW.digest := almanac_audit_digest(
        NEW.seq, NEW.id, NEW.tenant_id, NEW.actor, NEW.action, NEW.object_type, NEW.object_id,
        NEW.detail, NEW.created_at, NEW.prev_digest
    );
    RETURN NEW;
END;
$$;
CREATE TRIGGER almanac_audit_chain BEFORE INSERT ON almanac_auditevent
    FOR EACH ROW EXECUTE FUNCTION almanac_audit_chain();
"""

# Whoever the default privileges let write rows (the runtime role) may still only INSERT and
# SELECT here; only the owner keeps the rest.
REVOKE_WRITES = """
DO $$
DECLARE g record;
BEGIN
    FOR g IN
        SELECT DISTINCT a.grantee::regrole::text AS role
        FROM pg_class c, aclexplode(c.relacl) a
        WHERE c.oid = 'almanac_auditevent'::regclass AND a.grantee <> 0 AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON almanac_auditevent FROM %s', g.role);
    END LOOP;
    REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON almanac_auditevent FROM PUBLIC;
END;
$$;
"""


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("almanac", "0001_initial"),
        ("almanac", "0002_auditevent"),
        ("almanac", "0003_audit_append_only"),
        ("almanac", "0004_agentkey_rate_limit"),
        ("almanac", "0005_container_visibility"),
        ("almanac", "0006_audit_chain"),
        ("almanac", "0007_userprofile_username"),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        VectorExtension(),
        migrations.CreateModel(
            name="Tenant",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("slug", models.SlugField(max_length=64, unique=True)),
                ("name", models.CharField(max_length=200)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.CreateModel(
            name="Project",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200)),
                ("key", models.CharField(max_length=200)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="projects",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="Department",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200)),
                ("key", models.CharField(max_length=200)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="departments",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="CorpusStat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("corpus", models.CharField(max_length=32)),
                ("docs", models.BigIntegerField(default=0)),
                ("total_len", models.BigIntegerField(default=0)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="almanac.tenant"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "actor",
                    models.CharField(blank=True, help_text="username, agent key name or job", max_length=200),
                ),
                ("action", models.CharField(max_length=64)),
                ("object_type", models.CharField(blank=True, max_length=64)),
                ("object_id", models.CharField(blank=True, max_length=64)),
                ("detail", models.JSONField(blank=True, default=dict)),
                ("created_at", models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                (
                    "seq",
                    models.BigIntegerField(
                        db_default=0, editable=False, help_text="position in its tenant's chain"
                    ),
                ),
                ("prev_digest", models.CharField(db_default="", editable=False, max_length=64)),
                ("digest", models.CharField(db_default="", editable=False, max_length=64)),
                (
                    "tenant",
                    models.ForeignKey(
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="AgentKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200)),
                ("prefix", models.CharField(max_length=16)),
                ("hashed_secret", models.CharField(max_length=64, unique=True)),
                ("can_act_for_users", models.BooleanField(default=True)),
                ("can_push_events", models.BooleanField(default=False)),
                (
                    "rate_limit",
                    models.CharField(
                        blank=True,
                        help_text='requests per period, e.g. "600/m" or "50/s"; empty: the API_RATE_LIMIT setting; "0": none',
                        max_length=20,
                        validators=[almanac.models.rate_limit_validate],
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="agent_keys",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="AccessGroup",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=300)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("tenant", "Tenant"),
                            ("dept", "Department"),
                            ("project", "Project"),
                            ("user", "User"),
                            ("source", "Source"),
                        ],
                        max_length=16,
                    ),
                ),
                ("name", models.CharField(blank=True, max_length=300)),
                ("builtin", models.BooleanField(default=False)),
                (
                    "public",
                    models.BooleanField(
                        blank=True, help_text="source container: readable tenant-wide", null=True
                    ),
                ),
                (
                    "public_at",
                    models.DateTimeField(blank=True, help_text="when `public` was last observed", null=True),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="access_groups",
                        to="almanac.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="TermStat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("corpus", models.CharField(max_length=32)),
                ("term", models.CharField(max_length=200)),
                ("df", models.IntegerField(default=0)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="almanac.tenant"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="UserProfile",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "username",
                    models.CharField(
                        help_text="the name in the tenant (unique there)",
                        max_length=150,
                        verbose_name="name in tenant",
                    ),
                ),
                ("title", models.CharField(blank=True, max_length=200)),
                ("display_name", models.CharField(blank=True, max_length=200)),
                (
                    "departments",
                    models.ManyToManyField(blank=True, related_name="members", to="almanac.department"),
                ),
                (
                    "projects",
                    models.ManyToManyField(blank=True, related_name="members", to="almanac.project"),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="profiles",
                        to="almanac.tenant",
                    ),
                ),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="profile",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="GroupMembership",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "origin",
                    models.CharField(
                        default="builtin", help_text="builtin, admin, or a connector source", max_length=64
                    ),
                ),
                ("confirmed_at", models.DateTimeField(auto_now=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "group",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to="almanac.accessgroup",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="group_memberships",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("user", "group"), name="almanac_groupmembership_unique_member"
                    )
                ],
            },
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.UniqueConstraint(fields=("tenant", "key"), name="almanac_project_unique_key"),
        ),
        migrations.AddConstraint(
            model_name="department",
            constraint=models.UniqueConstraint(
                fields=("tenant", "key"), name="almanac_department_unique_key"
            ),
        ),
        migrations.AddConstraint(
            model_name="corpusstat",
            constraint=models.UniqueConstraint(
                fields=("tenant", "corpus"), name="almanac_corpusstat_unique_corpus"
            ),
        ),
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(fields=["tenant", "-created_at"], name="almanac_audit_recent_idx"),
        ),
        migrations.AddConstraint(
            model_name="auditevent",
            constraint=models.UniqueConstraint(
                fields=("tenant", "seq"), name="almanac_auditevent_chain_seq", nulls_distinct=False
            ),
        ),
        migrations.AddConstraint(
            model_name="agentkey",
            constraint=models.UniqueConstraint(
                condition=models.Q(("revoked_at__isnull", True)),
                fields=("tenant", "name"),
                name="almanac_agentkey_unique_active_name",
            ),
        ),
        migrations.AddConstraint(
            model_name="accessgroup",
            constraint=models.UniqueConstraint(
                fields=("tenant", "key"), name="almanac_accessgroup_unique_key"
            ),
        ),
        migrations.AddConstraint(
            model_name="termstat",
            constraint=models.UniqueConstraint(
                fields=("tenant", "corpus", "term"), name="almanac_termstat_unique_term"
            ),
        ),
        migrations.AddConstraint(
            model_name="userprofile",
            constraint=models.UniqueConstraint(
                fields=("tenant", "username"), name="almanac_userprofile_unique_username"
            ),
        ),
        migrations.RunSQL(APPEND_ONLY, migrations.RunSQL.noop),
        migrations.RunSQL(DIGEST, migrations.RunSQL.noop),
        migrations.RunSQL(CHAIN, migrations.RunSQL.noop),
        migrations.RunSQL(REVOKE_WRITES, migrations.RunSQL.noop),
    ]
