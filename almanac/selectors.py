"""Permission-aware reads for tenancy. `user_group_keys` is the single source of truth
for what a user may read: every read path (memories, wiki, context, UI, admin) uses it."""

from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.auth import get_user_model
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import BooleanField, F
from django.db.models.expressions import Expression

from almanac.models import AccessGroup, AgentKey, GroupMembership, Tenant, UserProfile
from almanac.search.rows import instance, select_list

User = get_user_model()


def user_tenant(user) -> Tenant | None:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    profile = UserProfile.objects.select_related("tenant").filter(user_id=user.pk).first()
    return profile.tenant if profile else None


def user_group_keys(user) -> list[str]:
    """Group keys the user belongs to, resolved now (never cached), within their tenant.

    Fails closed: an anonymous user or one without a tenant gets no keys at all.
    """
    return user_access(user)[1]


_snapshot: ContextVar[dict | None] = ContextVar("almanac_access_snapshot", default=None)


@contextmanager
def access_snapshot():
    """One consistent view of memberships for the reads of one request (e.g. a context call).

    Inside it each user's keys are resolved once, at the first read; outside it every read
    resolves them again.
    """
    if _snapshot.get() is not None:  # already inside one: keep its view
        yield
        return
    token = _snapshot.set({})
    try:
        yield
    finally:
        _snapshot.reset(token)


def snapshot_memo(key, compute):
    """`compute()` once per access snapshot (one request's reads); outside one, every time."""
    snapshot = _snapshot.get()
    if snapshot is None:
        return compute()
    memo = snapshot.setdefault("memo", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def user_access(user) -> tuple[int | None, list[str]]:
    """The user's tenant id and group keys, resolved now in one query (fails closed)."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return None, []
    snapshot = _snapshot.get()
    if snapshot is not None and user.pk in snapshot:
        return snapshot[user.pk]
    with connection.cursor() as cursor:
        # A subquery and a sort in Python: aggregating ~1,000 keys of a busy reader with
        # ORDER BY in SQL sorted them by the database collation (~0.8 ms of ~2 ms).
        cursor.execute(
            f"""SELECT p.tenant_id, ARRAY(
                    SELECT g.key FROM {GroupMembership._meta.db_table} m
                    JOIN {AccessGroup._meta.db_table} g ON g.id = m.group_id
                    WHERE m.user_id = p.user_id AND g.tenant_id = p.tenant_id)
                FROM {UserProfile._meta.db_table} p
                WHERE p.user_id = %s""",
            [user.pk],
        )
        row = cursor.fetchone()
    access = (row[0], sorted(row[1])) if row else (None, [])
    if snapshot is not None:
        snapshot[user.pk] = access
    return access


def text_array(values) -> str:
    """Strings as one PostgreSQL array literal, sent as a single text parameter (`%s::text[]`).

    psycopg adapts a Python list element by element in Python; for the few short lists of
    a context call (query terms, ids) that was ~4% of its CPU in a profile; the literal costs
    next to nothing.
    """
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


def int_array(values) -> str:
    """Integers as one PostgreSQL array literal (`%s::bigint[]`), see `text_array`."""
    return "{" + ",".join(str(int(v)) for v in values) + "}"


@functools.lru_cache(maxsize=256)
def _literal(keys: tuple[str, ...]) -> str:
    return text_array(keys)


def keys_literal(keys: list[str]) -> str:
    """The keys as one PostgreSQL array literal (a single string parameter, cast in SQL).

    Adapting a list of a thousand strings costs psycopg ~2.5 ms per query in Python; a
    context call sends the same list in a dozen queries, so it is built once.
    """
    return _literal(tuple(keys))


# Above this many keys, GIN's `&&` costs O(matching rows x keys); a per-row probe of the
# row's few ACL entries into a hashed key set is then far cheaper (measured: 999 keys,
# 18k candidates: 220 ms vs 30 ms; the hashed subplans below: 3.7k candidates 11 ms, the
# earlier EXISTS-over-unnest probe 15 ms). Below it, `&&` lets the planner use the GIN index.
GIN_MAX_KEYS = 64


def _acl_predicate(tenant: str, acl: str, tenant_id: int, keys: list[str]) -> tuple[str, list]:
    """SQL over the SQL of a row's tenant id and acl array: its tenant and a shared key."""
    literal = keys_literal(keys)
    if len(keys) <= GIN_MAX_KEYS:
        return f"({tenant} = %s AND {acl} && %s::varchar[])", [tenant_id, literal]
    # Rows carry one or two keys (a scope; a container and maybe the tenant): each of those
    # subscripts probes a hashed set of the keys (built once per query); a longer array
    # is compared whole. The keys stay inside subqueries, where the planner does not
    # estimate a thousand `=` clauses (that alone cost ~2 ms of planning per query).
    return (
        f"({tenant} = %s AND ({acl}[1]::text IN (SELECT unnest(%s::text[])) "
        f"OR {acl}[2]::text IN (SELECT unnest(%s::text[])) "
        f"OR (cardinality({acl}) > 2 AND {acl}::text[] && ARRAY(SELECT unnest(%s::text[])))))",
        [tenant_id, literal, literal, literal],
    )


def acl_sql(user, *, table: str, column: str = "acl") -> tuple[str, list] | None:
    """THE access predicate, as SQL over `table` (a table name or alias), with its params.

    True for rows of the user's tenant whose `acl` array shares a key with the user's
    access groups, resolved now (one query per access snapshot, never cached across
    requests), so a revocation applies to the very next read. None when the user may see
    nothing at all (anonymous, inactive or tenant-less): callers then read nothing.
    Raw reads embed it; `acl_visible` applies the same predicate to querysets.
    """
    tenant_id, keys = user_access(user)
    if tenant_id is None or not keys:
        return None
    return _acl_predicate(f'"{table}"."tenant_id"', f'"{table}"."{column}"', tenant_id, keys)


class _AclMatch(Expression):
    """`_acl_predicate` over a queryset's own columns (aliased correctly in subqueries)."""

    conditional = True
    output_field = BooleanField()

    def __init__(self, field: str, tenant_id: int, keys: list[str]):
        super().__init__()
        self.columns = [F("tenant_id"), F(field)]
        self.tenant_id, self.keys = tenant_id, keys

    def get_source_expressions(self):
        return self.columns

    def set_source_expressions(self, exprs):
        self.columns = list(exprs)

    def as_sql(self, compiler, connection):
        (tenant, tenant_params), (acl, acl_params) = (compiler.compile(c) for c in self.columns)
        assert not tenant_params and not acl_params  # plain columns
        return _acl_predicate(tenant, acl, self.tenant_id, self.keys)


def acl_visible(queryset, user, *, field: str = "acl", key_prefixes: tuple[str, ...] | None = None):
    """THE access filter for every retrievable row (memories, wiki sections): `acl_sql`.

    `key_prefixes`: the only kinds of key the table's `acl` can hold (a CHECK constraint
    guarantees it); the user's other keys can match nothing there and are not sent. A
    reader in a thousand channels holds a handful of memory keys, and with so few the
    planner can intersect the ACL index with the search index instead of checking the
    ACL of every candidate row.
    """
    tenant_id, keys = user_access(user)
    if key_prefixes is not None:
        keys = [key for key in keys if key.startswith(key_prefixes)]
    if tenant_id is None or not keys:
        return queryset.none()
    return queryset.filter(_AclMatch(field, tenant_id, keys))


def where_sql(queryset) -> tuple[str, list] | None:
    """A filtered queryset's WHERE clause as SQL over its table, with its params, or None
    when it selects nothing: raw reads over exactly its rows (the search lanes, whose ORM
    query building cost ~1.3 ms of CPU per lane). Filters on the model's own columns only."""
    query = queryset.query
    joined = [alias for alias in query.alias_map if query.alias_refcount.get(alias)]
    if len(joined) > 1 or query.distinct or query.combinator or query.is_sliced:
        raise ValueError("where_sql takes a plain filtered queryset of one table")
    try:
        sql, params = query.get_compiler(using=queryset.db).compile(query.where)
    except EmptyResultSet:
        return None
    except FullResultSet:
        return "TRUE", []
    return sql or "TRUE", list(params)


# The lookups every agent call starts with are raw statements (almanac.search.rows); the
# other one, from `user` to a user, is `almanac.services.users.user_resolve`.


def agentkey_for_secret(raw: str) -> AgentKey | None:
    """The active (unrevoked) key with this secret, its tenant loaded, or None."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT {select_list(AgentKey, "k")}, {select_list(Tenant, "t")}
                FROM {AgentKey._meta.db_table} k JOIN {Tenant._meta.db_table} t ON t.id = k.tenant_id
                WHERE k.hashed_secret = %s AND k.revoked_at IS NULL""",
            [AgentKey.hash_secret(raw)],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(AgentKey._meta.concrete_fields)
    key = instance(AgentKey, row[:split])
    key.tenant = instance(Tenant, row[split:])
    return key


def group_members(*, tenant: Tenant, key: str) -> list[str]:
    return list(
        GroupMembership.objects.filter(group__tenant=tenant, group__key=key)
        .values_list("user__profile__username", flat=True)
        .order_by("user__profile__username")
    )


def group_get(*, tenant: Tenant, key: str) -> AccessGroup | None:
    return AccessGroup.objects.filter(tenant=tenant, key=key).first()
