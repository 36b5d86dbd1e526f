from django.db import migrations


class Migration(migrations.Migration):
    """Back to pgvector's default (EXTERNAL) storage for the embedding.

    Measured at 100k memories: with vectors inline a row is ~2.7 KB (one per heap page), so
    the keyword lane's BM25 scoring and the HNSW filter recheck read a page per candidate;
    out of line, rows are ~600 B and only the few rows whose distance is returned fetch
    their vector. Exact scans (small tenants) pay a TOAST fetch per row, which is cheap there.
    """

    dependencies = [("memories", "0002_plain_embedding_storage")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
            "ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE PLAIN",
        ),
    ]
