"""The audit log becomes a hash chain (docs/operations.md, "Audit log").

Every row carries `seq` (its position in its tenant's chain; rows without a tenant form one
global chain), `prev_digest` (the digest of the row before it) and `digest` (sha256 of its
own fields and `prev_digest`). A BEFORE INSERT trigger, owned by the role that runs the
migrations, computes them under a per-chain advisory lock and stamps `created_at` with the
database clock, so an INSERT by the app (the runtime role, which cannot alter or disable
the trigger) is always chained and can never be back-dated. Existing rows are chained in
id order (`fill_audit_chain`). `manage.py audit_verify` recomputes the digests in Python.

The digested text is each field as `<length>:<text>`, in order: seq, id, tenant_id ('' when
NULL), actor, action, object_type, object_id, detail (jsonb's canonical text), created_at
(UTC, `YYYY-MM-DDTHH:MI:SS.US`), prev_digest — almanac.services.audit.audit_payload.
"""

import django.db.models.functions.datetime
from django.db import migrations, models

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
# the head is read: the lock holder's row is committed (or rolled back) before the next
# writer reads the head (READ COMMITTED: each statement sees what committed before it).
# Writers of different tenants never wait for each other. Table names come from the
# trigger's own relation, so a same-named temporary table cannot stand in for the chain.
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

UNCHAIN = """
DROP TRIGGER IF EXISTS almanac_audit_chain ON almanac_auditevent;
DROP FUNCTION IF EXISTS almanac_audit_chain();
"""

# Existing rows, chained in id order per tenant. The append-only trigger refuses UPDATE,
# so it is switched off for this one statement block (the migration runs as the owner).
FILL = """
ALTER TABLE almanac_auditevent DISABLE TRIGGER almanac_audit_no_update;
DO $$
DECLARE
    r record;
    chain bigint := -1;
    pos bigint := 0;
    prev text := '';
    d text;
BEGIN
    FOR r IN SELECT * FROM almanac_auditevent ORDER BY tenant_id NULLS FIRST, id LOOP
        IF coalesce(r.tenant_id, 0) <> chain THEN
            chain := coalesce(r.tenant_id, 0);
            pos := 0;
            prev := '';
        END IF;
        pos := pos + 1;
        d := almanac_audit_digest(
            pos, r.id, r.tenant_id, r.actor, r.action, r.object_type, r.object_id,
            r.detail, r.created_at, prev
        );
        UPDATE almanac_auditevent SET seq = pos, prev_digest = prev, digest = d WHERE id = r.id;
        prev := d;
    END LOOP;
END;
$$;
ALTER TABLE almanac_auditevent ENABLE TRIGGER almanac_audit_no_update;
"""

UNFILL = """
ALTER TABLE almanac_auditevent DISABLE TRIGGER almanac_audit_no_update;
UPDATE almanac_auditevent SET seq = 0, prev_digest = '', digest = '';
ALTER TABLE almanac_auditevent ENABLE TRIGGER almanac_audit_no_update;
"""


# Whoever the default privileges let write rows (the runtime role) may still only INSERT and
# SELECT here; only the owner keeps the rest. Role names are not known to a migration, so
# every grantee other than the owner loses them.
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
    dependencies = [
        ("almanac", "0005_container_visibility"),
    ]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="digest",
            field=models.CharField(db_default="", editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="auditevent",
            name="prev_digest",
            field=models.CharField(db_default="", editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="auditevent",
            name="seq",
            field=models.BigIntegerField(db_default=0, editable=False, help_text="position in its tenant's chain"),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="created_at",
            field=models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
        ),
        migrations.RunSQL(DIGEST, "DROP FUNCTION IF EXISTS almanac_audit_digest(bigint, bigint, bigint, text, text, text, text, jsonb, timestamptz, text);"),
        migrations.RunSQL(FILL, UNFILL),
        migrations.RunSQL(CHAIN, UNCHAIN),
        migrations.RunSQL(REVOKE_WRITES, migrations.RunSQL.noop),
        migrations.AddConstraint(
            model_name="auditevent",
            constraint=models.UniqueConstraint(
                fields=("tenant", "seq"), name="almanac_auditevent_chain_seq", nulls_distinct=False
            ),
        ),
    ]
