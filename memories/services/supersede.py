"""Supersede: a newer memory that states another value for the same thing (same key:
subject + attribute, `almanac.text.claims`; the same thing and the same value as
`almanac.text.stated` decides) in the same scope replaces the older one.

The older one becomes `superseded`, points to its successor (`superseded_by`), leaves
recall and context (they read active memories only) and is audited (`memory.supersede`,
with both texts' digests); skills hear of it (`memory.superseded`, with both texts). Undone by setting it active again (PATCH, the admin's
"reactivate", `memory_set_status`): it is unlinked and active beside its successor, and
stays so (supersede runs when a memory is written, not again later). Deleting or purging
the successor brings the memories it superseded back (`supersede_release`).
"""

from __future__ import annotations

from django.db import transaction

from almanac.text.claims import claim, claim_value, key_normalize
from almanac.text.stated import Stated, holds_value, same_value
from memories.models import Memory
from memories.services.events import memory_superseded_payload
from memories.services.rows import keyed, memory_audit, memory_set_status
from skills.signals import domain_event

# A correction that names no subject ("不是30万，是50万") corrects the newest memory of its
# scope that says the old value, among this many.
CORRECTION_LOOKBACK = 200
# Rows of an older schema version (keys not stored yet) read per write until the job upgrades them.
UPGRADE_LOOKBACK = 500


def memory_claim(*, content: str, key: str | None) -> Stated | None:
    """The claim of a memory being written: read from its text, with `key` (named by the
    caller or the extractor, normalized as read keys are) taking the place of the key read."""
    found = claim(content)
    if not key:
        return found
    key = key_normalize(key)
    if not key:
        return found
    if found is None:
        return Stated.of_key(key, claim_value(content, key))
    return Stated.of_key(key, found.value, found.old)


@transaction.atomic
def memory_supersede_older(*, memory: Memory, found: Stated | None, user, reason: str) -> list[int]:
    """Supersede the active memories of `memory`'s scope that state another value for its
    key (or, for a correction without a subject, the newest one that says the corrected
    value). Call under the tenant's write lock (`memory_create` holds it). Returns their ids.
    """
    if found is None or not keyed(memory.memory_type, memory.kind):
        return []
    older = _older(memory=memory, found=found)
    if found.correction and not found.key and older and not memory.fact_key:
        memory.fact_key = older[0].fact_key  # it speaks of that thing from now on
        memory.save(update_fields=["fact_key"])
    for previous in older:
        mark_superseded(previous, by=memory, user=user, reason=reason)
    if older:
        payload = memory_superseded_payload(memory, older, user=user, reason=reason)
        domain_event.send(
            sender=Memory, event="memory.superseded", payload=payload, tenant_id=memory.tenant_id
        )
    return [previous.pk for previous in older]


def mark_superseded(previous: Memory, *, by: Memory, user, reason: str) -> None:
    """`previous` superseded by `by`: its status, its link, a history row and the audit."""
    previous.status, previous.superseded_by = Memory.Status.SUPERSEDED, by
    previous._history_user = user
    previous._change_reason = reason
    previous.save(update_fields=["status", "superseded_by", "updated_at"])
    memory_audit(
        action="memory.supersede",
        memory=previous,
        user=user,
        memory_id=previous.pk,
        detail={"reason": reason, "superseded_by": by.pk, "key": by.fact_key},
        before=previous.content,
        after=by.content,
    )


def _older(*, memory: Memory, found: Stated) -> list[Memory]:
    scope = (
        Memory.objects.filter(
            tenant_id=memory.tenant_id,
            acl=memory.acl,
            status=Memory.Status.ACTIVE,
            memory_type=Memory.Type.SEMANTIC,
        )
        .exclude(pk=memory.pk)
        .exclude(kind__in=[Memory.Kind.SUMMARY, Memory.Kind.EVENT])
        .defer("embedding")
        .select_for_update(of=("self",))
    )
    if found.key:
        rows = list(scope.filter(fact_key=found.key).order_by("-created_at", "-id"))
        # Rows the upgrade job has not rewritten yet have no key stored; read, they get one
        # (only rows holding one of the key's words: reading each costs its segmentation).
        words = [word for word in found.key.split() if not word.startswith("·")]
        old = scope.filter(schema_version__lt=Memory.SCHEMA_VERSION, tf__has_any_keys=words)
        rows += [
            row for row in old.order_by("-created_at", "-id")[:UPGRADE_LOOKBACK] if row.fact_key == found.key
        ]
        rows = list({row.pk: row for row in rows}.values())
        return [row for row in rows if not same_value(claim_value(row.content, found.key), found.value)]
    # A correction without a subject: the newest memory of the scope saying the old value.
    for row in scope.order_by("-created_at", "-id")[:CORRECTION_LOOKBACK]:
        said = claim(row.content)
        if said is not None and holds_value(said.value, found.old):
            return [row]
    return []


@transaction.atomic
def supersede_release(*, successor: Memory, user, reason: str) -> int:
    """The memories `successor` superseded back to active (it is being deleted or purged:
    what they said is the last word again), unlinked and audited. A successor that was
    itself superseded hands them on to its own successor instead: A → B → C, deleting B
    leaves A superseded by C (C, not A, is the current value)."""
    replaced = Memory.objects.filter(superseded_by_id=successor.pk, status=Memory.Status.SUPERSEDED)
    if successor.status == Memory.Status.SUPERSEDED and successor.superseded_by_id:
        handed = 0
        for memory in replaced.select_for_update():
            memory.superseded_by_id = successor.superseded_by_id
            memory._change_reason = reason
            memory.save(update_fields=["superseded_by"])
            handed += 1
        return handed
    return memory_set_status(memories=replaced, status=Memory.Status.ACTIVE, user=user, reason=reason)
