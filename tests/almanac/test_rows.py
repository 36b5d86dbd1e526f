"""Raw rows loaded as model instances (`almanac.search.rows`) are what the ORM would have loaded."""

from django.db import connection

from almanac.search.rows import instance, select_list
from memories.models import Memory
from tests.memories.conftest import unit

FIELDS = ("id", "tenant_id", "owner_id", "content", "meta", "acl", "memory_type", "created_at", "occurred_at")


def test_instance_matches_the_orm_and_defers_the_rest(tenant, alice):
    saved = Memory.objects.create(
        tenant=tenant,
        owner=alice,
        scope="user",
        scope_key="user:alice",
        content="Renewal 续约 at $12k",
        acl=["user:alice"],
        meta={"source": "slack", "nested": {"n": 1}},
        embedding=unit(3),
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {select_list(Memory, 'm', FIELDS)} FROM memories_memory m WHERE m.id = %s", [saved.pk]
        )
        loaded = instance(Memory, cursor.fetchone(), FIELDS)
    expected = Memory.objects.get(pk=saved.pk)
    assert {f: getattr(loaded, f) for f in FIELDS} == {f: getattr(expected, f) for f in FIELDS}
    assert loaded.meta == {"source": "slack", "nested": {"n": 1}}  # JSON decoded, as the ORM does
    assert "importance" in loaded.get_deferred_fields()
    assert loaded.importance == expected.importance  # a deferred field loads on first use
    assert not loaded._state.adding
