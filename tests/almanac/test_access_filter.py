"""The one access filter (`almanac.selectors.acl_visible`) on both of its paths.

Up to GIN_MAX_KEYS keys it is an indexable `acl && keys`; above, a per-row probe into the
keys sent as one array literal. Both must give the same answer, for keys with characters
that need quoting in an array literal too, and follow a revocation on the next read.
"""

import pytest

from almanac import selectors
from almanac.selectors import keys_literal
from almanac.services import group_ensure, membership_add, membership_remove
from memories.models import Memory
from tests.memories.conftest import unit

ODD_KEYS = ['email:thread:<a"b@x>', "slack:channel:C{1}", "github:repo:o/n,1", "notes:a\\b", "calendar:事件"]


def test_keys_literal_round_trips_through_postgres(db):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[]", [keys_literal(ODD_KEYS)])
        assert cursor.fetchone()[0] == ODD_KEYS


def _memory(tenant, owner, key: str, content: str) -> Memory:
    return Memory.objects.create(
        tenant=tenant,
        owner=owner,
        scope="user",
        scope_key=key,
        content=content,
        acl=[key],
        embedding=unit(len(content)),
    )


@pytest.mark.parametrize("extra_groups", [0, selectors.GIN_MAX_KEYS + 10], ids=["overlap", "probe"])
def test_both_paths_agree_and_follow_revocation(tenant, alice, bob, extra_groups):
    groups = [group_ensure(tenant=tenant, key=key, kind="test") for key in ODD_KEYS]
    for group in groups:
        membership_add(user=alice, group=group, origin="test")
    for i in range(extra_groups):  # unrelated groups push alice past the GIN threshold
        membership_add(
            user=alice, group=group_ensure(tenant=tenant, key=f"email:thread:{i}", kind="test"), origin="test"
        )
    assert (len(selectors.user_group_keys(alice)) > selectors.GIN_MAX_KEYS) == bool(extra_groups)
    mine = [_memory(tenant, bob, key, f"note {i}") for i, key in enumerate(ODD_KEYS)]
    hidden = _memory(tenant, bob, "email:thread:not-alice", "not for alice")
    deep = _memory(tenant, bob, "x:1", "alice's key third in its acl")
    deep.acl = ["x:1", "x:2", ODD_KEYS[2]]
    deep.save(update_fields=["acl"])
    mine.append(deep)

    visible = set(Memory.objects.visible_to(alice).values_list("pk", flat=True))
    assert visible >= {m.pk for m in mine} and hidden.pk not in visible

    membership_remove(user=alice, group=groups[0])  # the key with a quote and angle brackets
    visible = set(Memory.objects.visible_to(alice).values_list("pk", flat=True))
    assert mine[0].pk not in visible and {m.pk for m in mine[1:]} <= visible


@pytest.mark.parametrize("extra_groups", [0, selectors.GIN_MAX_KEYS + 10], ids=["overlap", "probe"])
def test_both_paths_work_inside_a_subquery_and_as_raw_sql(tenant, alice, bob, extra_groups):
    """The filter in a correlated subquery (the wiki page list) and in raw SQL gives the same rows."""
    from django.db import connection
    from django.db.models import Exists, OuterRef

    for key in ODD_KEYS[:2]:
        membership_add(user=alice, group=group_ensure(tenant=tenant, key=key, kind="test"), origin="test")
    for i in range(extra_groups):
        membership_add(
            user=alice, group=group_ensure(tenant=tenant, key=f"email:thread:{i}", kind="test"), origin="test"
        )
    mine = {_memory(tenant, bob, key, f"note {i}").pk for i, key in enumerate(ODD_KEYS[:2])}
    _memory(tenant, bob, ODD_KEYS[3], "not for alice")

    inner = Memory.objects.visible_to(alice).filter(pk=OuterRef("pk"))
    assert set(Memory.objects.filter(Exists(inner)).values_list("pk", flat=True)) == mine
    sql, params = selectors.acl_sql(alice, table="m")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT m.id FROM {Memory._meta.db_table} m WHERE {sql}", params)
        assert {row[0] for row in cursor.fetchall()} == mine
    assert selectors.acl_sql(None, table="m") is None
