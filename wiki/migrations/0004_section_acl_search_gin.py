# One GIN over (acl, search_vector) instead of one on each, as for memories. Built and
# dropped concurrently, so writes go on.

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("wiki", "0003_section_stale_index"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="pagesection",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["acl", "search_vector"], name="wiki_section_acl_search_gin"
            ),
        ),
        RemoveIndexConcurrently(model_name="pagesection", name="wiki_section_acl_gin"),
        RemoveIndexConcurrently(model_name="pagesection", name="wiki_section_search_gin"),
    ]
