"""The one access filter (`almanac.selectors.acl_visible`) on both of its paths.

Up to GIN_MAX_KEYS keys it is an indexable `acl && keys`; above, a per-row probe into the
keys sent as one array literal. Both must give the same answer, for keys with characters
that need quoting in an array literal too, and follow a revocation on the next read.
"""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from almanac import selectors
from almanac.selectors import int_array, keys_literal, text_array
from almanac.services.tenancy import group_ensure, membership_add, membership_remove
from memories.models import Memory
from tests.memories.conftest import unit

# Memory acl keys are scope keys (a constraint), so the odd characters go after the scope.
ODD_KEYS = ['project:<a"b@x>', "dept:C{1}", "project:o/n,1", "user:a\\b", "dept:事件"]


def test_keys_literal_round_trips_through_postgres(db):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[]", [keys_literal(ODD_KEYS)])
        assert cursor.fetchone()[0] == ODD_KEYS


# What PostgreSQL text can hold (no NUL), including what an array literal treats specially:
# quotes, backslashes, braces, commas, spaces, NULL and the empty string.
texts = st.lists(
    st.text().filter(lambda t: "\x00" not in t) | st.sampled_from(["NULL", "", " a ", '"', "\\", "{}", ","]),
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=texts, ids=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=12))
def test_array_literals_round_trip_through_postgres(db, values, ids):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[], %s::bigint[]", [text_array(values), int_array(ids)])
        assert cursor.fetchone() == (values, ids)


def test_timestamps_round_trip_as_a_text_array(db):
    from django.db import connection

    ats = [datetime(2026, 12, 3, 13, 0, 0, 123456, tzinfo=UTC), datetime.now(UTC) - timedelta(days=400)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::timestamptz[]", [text_array(at.isoformat() for at in ats)])
        assert cursor.fetchone()[0] == ats


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
            user=alice,
            group=group_ensure(tenant=tenant, key=f"project:extra-{i}", kind="test"),
            origin="test",
        )
    assert (len(selectors.user_group_keys(alice)) > selectors.GIN_MAX_KEYS) == bool(extra_groups)
    mine = [_memory(tenant, bob, key, f"note {i}") for i, key in enumerate(ODD_KEYS)]
    hidden = _memory(tenant, bob, "project:not-alice", "not for alice")

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
            user=alice,
            group=group_ensure(tenant=tenant, key=f"project:extra-{i}", kind="test"),
            origin="test",
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


@pytest.mark.parametrize("extra_groups", [0, selectors.GIN_MAX_KEYS + 10], ids=["overlap", "probe"])
def test_the_predicate_matches_any_position_of_a_longer_acl(tenant, alice, extra_groups):
    """Sections carry up to a few keys; the busy-reader probe compares a longer acl whole."""
    from django.db import connection

    membership_add(user=alice, group=group_ensure(tenant=tenant, key=ODD_KEYS[2], kind="test"), origin="test")
    for i in range(extra_groups):
        membership_add(
            user=alice,
            group=group_ensure(tenant=tenant, key=f"slack:channel:{i}", kind="test"),
            origin="test",
        )
    rows = {
        1: ["x:1", "x:2", ODD_KEYS[2]],
        2: [ODD_KEYS[2]],
        3: ["x:1", ODD_KEYS[2]],
        4: ["x:1", "x:2", "x:3"],
    }
    sql, params = selectors.acl_sql(alice, table="t")
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE t (id int, tenant_id bigint, acl varchar(300)[])")
        for pk, acl in rows.items():
            cursor.execute("INSERT INTO t VALUES (%s, %s, %s)", [pk, tenant.pk, acl])
        cursor.execute("INSERT INTO t VALUES (5, %s, %s)", [tenant.pk + 1, [ODD_KEYS[2]]])  # another tenant
        cursor.execute(f"SELECT id FROM t WHERE {sql} ORDER BY id", params)
        assert [row[0] for row in cursor.fetchall()] == [1, 2, 3]


def test_memory_keys_other_than_scope_keys_are_refused(tenant, bob):
    """The constraint that lets the memory filter send a reader's scope keys only."""
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        _memory(tenant, bob, "slack:channel:C1", "a channel key on a memory")
    with pytest.raises(IntegrityError), transaction.atomic():
        memory = _memory(tenant, bob, "project:p", "two keys")
        Memory.objects.filter(pk=memory.pk).update(acl=["project:p", "user:bob"])


def test_a_reader_in_many_channels_sends_only_memory_keys(tenant, alice, bob):
    """Hundreds of channel keys do not reach the memory filter; what alice sees is unchanged."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    membership_add(user=alice, group=group_ensure(tenant=tenant, key="project:p", kind="test"), origin="test")
    for i in range(selectors.GIN_MAX_KEYS + 10):
        membership_add(
            user=alice,
            group=group_ensure(tenant=tenant, key=f"slack:channel:{i}", kind="test"),
            origin="test",
        )
    shared = _memory(tenant, bob, "project:p", "project note")
    _memory(tenant, bob, "project:q", "other project")
    with CaptureQueriesContext(connection) as ctx:
        assert list(Memory.objects.visible_to(alice).values_list("pk", flat=True)) == [shared.pk]
    assert "slack:channel" not in ctx.captured_queries[-1]["sql"]


def test_where_sql_is_the_querysets_own_filter(tenant, alice, bob):
    """Raw search lanes read exactly a visible queryset's rows; a join is refused, not dropped."""
    from django.db import connection

    membership_add(user=alice, group=group_ensure(tenant=tenant, key="project:p", kind="test"), origin="test")
    shared = _memory(tenant, bob, "project:p", "project note")
    _memory(tenant, bob, "project:q", "other project")
    sql, params = selectors.where_sql(Memory.objects.visible_to(alice))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {Memory._meta.db_table} WHERE {sql}", params)
        assert [row[0] for row in cursor.fetchall()] == [shared.pk]
    assert selectors.where_sql(Memory.objects.visible_to(None)) is None
    assert selectors.where_sql(Memory.objects.exclude(pk__in=[])) == ("TRUE", [])
    with pytest.raises(ValueError):
        selectors.where_sql(Memory.objects.filter(owner__username="bob"))
