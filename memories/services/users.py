"""What a user's rename or deletion means for memories (docs/design.md, Identity and access:
`user:<username>` is the
user's personal scope key, and it must follow the person, never the name).

Called from receivers (`memories.receivers`), inside the transaction of the rename or delete.
"""

from __future__ import annotations

from django.db import transaction
from simple_history.utils import bulk_update_with_history

from almanac.models import UserProfile
from memories.models import Memory
from memories.services.memories import memory_remove
from memories.services.rows import lock_tenant_writes

BATCH = 500
# Appended to a retired personal key in history rows: no username can contain "#", so no
# user can ever hold the result.
RETIRED = "#retired"


def memories_before_rename(*, user) -> None:
    """`user` is about to be saved under another name: take the tenant's memory-write lock
    now, before the user row is written (and locked). A memory writer holds that lock and
    then needs the user row (its owner foreign key); taken after the row, in the rename's
    `memories_personal_key_move`, it made the two wait for each other. Outside a
    transaction there is nothing to hold it for: the rename's own transaction takes it."""
    if not transaction.get_connection().in_atomic_block:
        return
    stored = type(user).objects.filter(pk=user.pk).values_list("username", flat=True).first()
    if stored is None or stored == user.username:
        return
    tenant_id = UserProfile.objects.filter(user_id=user.pk).values_list("tenant_id", flat=True).first()
    if tenant_id is not None:
        lock_tenant_writes(tenant_id)


def memories_personal_key_move(*, tenant_id: int, old_key: str, new_key: str) -> int:
    """Memories of the personal scope `old_key` now belong to `new_key` (a renamed user).

    Each gets a history row, and older history rows that name `old_key` name `new_key` now:
    versions are read through the access filter too (admin history), and the old key may be
    the next user's of that name.
    """
    lock_tenant_writes(tenant_id)  # a re-scope: before any row lock (memories.services.rows)
    scope_key = new_key.removeprefix(Memory.acl_key(Memory.Scope.USER, ""))
    rows = list(
        Memory.objects.filter(tenant_id=tenant_id, acl=[old_key]).defer(
            "embedding", "tokens", "tf", "search_vector"
        )
    )
    for memory in rows:
        memory.acl, memory.scope_key = [new_key], scope_key
    bulk_update_with_history(
        rows, Memory, ["acl", "scope_key"], batch_size=BATCH, default_change_reason="user-rename"
    )
    Memory.history.filter(tenant_id=tenant_id, acl=[old_key]).update(acl=[new_key], scope_key=scope_key)
    return len(rows)


def memories_personal_key_retire(*, tenant_id: int, key: str, user=None) -> int:
    """Delete what is left in the personal scope `key` of a user who is gone (`user`, being
    deleted, or a former one), so that no one who later gets that name (or key) reads it.

    History rows that name `key` name an unholdable key instead: a memory that was once in
    that scope and lives on elsewhere must not show those versions to the next holder.
    """
    lock_tenant_writes(tenant_id)
    count = 0
    for memory in Memory.objects.filter(tenant_id=tenant_id, acl=[key]).order_by("pk"):
        count += memory_remove(memory=memory, user=None, reason="user-deleted")
    Memory.history.filter(tenant_id=tenant_id, acl=[key]).update(acl=[key + RETIRED])
    return count


def memories_owner_leave(*, user) -> int:
    """`user` is being deleted. What they shared (dept, project, tenant scopes) stays for the
    people it was shared with, without an owner (the foreign key is set to NULL); what is
    still theirs alone (a `user` scope the key retirement did not reach) is deleted through
    the services, so the summaries and keyword statistics follow. Returns how many."""
    for tenant_id in sorted(set(Memory.objects.filter(owner_id=user.pk).values_list("tenant_id", flat=True))):
        lock_tenant_writes(tenant_id)  # before the rows below are locked, as every writer does
    count = 0
    for memory in Memory.objects.filter(owner_id=user.pk, scope=Memory.Scope.USER).order_by("pk"):
        count += memory_remove(memory=memory, user=None, reason="user-deleted")
    return count
