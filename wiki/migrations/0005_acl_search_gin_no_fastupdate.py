# The (acl, search_vector) GIN without a pending list, as for memories (memories 0007):
# new sections' entries no longer wait in a list that every keyword lane scans whole
# until VACUUM merges it. Altered in place (no rebuild); what is pending now is merged.

import django.contrib.postgres.indexes
from django.db import migrations

INDEX = "wiki_section_acl_search_gin"


class Migration(migrations.Migration):
    dependencies = [
        ("wiki", "0004_section_acl_search_gin"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"ALTER INDEX {INDEX} SET (fastupdate = off)",
                    reverse_sql=f"ALTER INDEX {INDEX} RESET (fastupdate)",
                ),
                migrations.RunSQL(f"SELECT gin_clean_pending_list('{INDEX}'::regclass)", migrations.RunSQL.noop),
            ],
            state_operations=[
                migrations.RemoveIndex(model_name="pagesection", name=INDEX),
                migrations.AddIndex(
                    model_name="pagesection",
                    index=django.contrib.postgres.indexes.GinIndex(
                        fastupdate=False, fields=["acl", "search_vector"], name=INDEX
                    ),
                ),
            ],
        ),
    ]
