# One GIN over (acl, search_vector) instead of one on each: the keyword lane intersects
# both conditions inside one index scan. Built and dropped concurrently, so writes go on.

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0004_acl_is_scope_key"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["acl", "search_vector"], name="memories_memory_acl_search_gin"
            ),
        ),
        RemoveIndexConcurrently(model_name="memory", name="memories_memory_search_gin"),
        RemoveIndexConcurrently(model_name="memory", name="memories_memory_acl_gin"),
    ]
