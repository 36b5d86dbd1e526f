from django.db import migrations

# Row-level UPDATE/DELETE are refused. TRUNCATE (table-owner only; used by test flushes)
# is not: in production, run the app as a role that does not own the table.

FORWARD = """
CREATE OR REPLACE FUNCTION almanac_audit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'almanac_auditevent is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER almanac_audit_no_update BEFORE UPDATE OR DELETE ON almanac_auditevent
    FOR EACH ROW EXECUTE FUNCTION almanac_audit_append_only();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS almanac_audit_no_update ON almanac_auditevent;
DROP FUNCTION IF EXISTS almanac_audit_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("almanac", "0002_auditevent")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
