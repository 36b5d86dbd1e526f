"""Compression (DESIGN §5): many active memories on one topic become one summary memory.

A topic is a group of active semantic memories of one scope (one acl key, so the summary
is visible to exactly the readers of its originals) whose embeddings are close: each joins
the first topic whose centroid it is at least MEMORY_TOPIC_SIMILARITY to, oldest first.
A topic with more than MEMORY_COMPRESS_MIN members is merged by the `compress` skill (LLM,
or the extractive fallback) into one new memory; the originals become `compressed`, are
linked to it (`compressed_into`) and can be restored for MEMORY_COMPRESSED_KEEP_DAYS,
after which the daily job deletes them.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import numpy as np
from django.db import transaction
from django.db.models import CharField, Count
from django.db.models.expressions import RawSQL
from django.utils import timezone

from almanac.search import embed
from memories import conf
from memories.models import Memory, MemoryLink
from memories.services.common import skill_run
from memories.services.memories import _audit, _remove, memory_insert, memory_set_status


def topics(memories: list[Memory]) -> list[list[Memory]]:
    """Greedy single pass, oldest first: a memory joins the first topic whose (running)
    centroid it is at least TOPIC_SIMILARITY to, else starts a new one."""
    groups: list[list[Memory]] = []
    sums: list[np.ndarray] = []
    for memory in memories:
        vector = np.asarray(memory.embedding, dtype=np.float32)
        best = None
        for index, total in enumerate(sums):
            centroid = total / (np.linalg.norm(total) or 1.0)
            if float(centroid @ vector) >= conf.TOPIC_SIMILARITY:
                best = index
                break
        if best is None:
            groups.append([memory])
            sums.append(vector.copy())
        else:
            groups[best].append(memory)
            sums[best] += vector
    return groups


@transaction.atomic
def memory_compress_topic(*, memories: list[Memory], reason: str = "job:compress") -> Memory:
    """Merge `memories` (one scope) into one new memory; the originals become `compressed`."""
    memories = sorted(memories, key=lambda m: (m.created_at, m.pk))
    first = memories[0]
    out = skill_run(
        name="compress",
        input={"items": [m.content for m in memories], "max_tokens": conf.COMPRESS_MAX_TOKENS},
        trigger=reason,
        tenant=first.tenant,
    )
    summary = (out.get("summary") or "").strip()
    owners = Counter(m.owner_id for m in memories)
    owner_id = max(
        owners, key=lambda pk: (owners[pk], max(m.created_at for m in memories if m.owner_id == pk))
    )
    ids = [m.pk for m in memories]
    memory_set_status(
        memories=Memory.objects.filter(pk__in=ids), status=Memory.Status.COMPRESSED, user=None, reason=reason
    )
    merged = memory_insert(
        tenant_id=first.tenant_id,
        owner_id=owner_id,
        scope=first.scope,
        scope_key=first.scope_key,
        memory_type=Memory.Type.SEMANTIC,
        content=summary,
        embedding=embed([summary])[0],
        importance=max(m.importance for m in memories),
        meta={"source": "compression", "compressed_from": ids},
        history_user=None,
        reason=reason,
    )
    MemoryLink.objects.bulk_create(
        [MemoryLink(source_id=pk, target=merged, kind=MemoryLink.Kind.COMPRESSED_INTO) for pk in ids]
    )
    _audit(
        action="memory.compress",
        memory=merged,
        user=None,
        memory_id=merged.pk,
        detail={"originals": len(ids)},
    )
    return merged


def _crowded_scopes():
    """(tenant id, acl key) of scopes with more active semantic memories than COMPRESS_MIN."""
    return (
        Memory.objects.filter(status=Memory.Status.ACTIVE, memory_type=Memory.Type.SEMANTIC)
        .annotate(key=RawSQL('"memories_memory"."acl"[1]', [], output_field=CharField()))
        .values("tenant_id", "key")
        .annotate(n=Count("id"))
        .filter(n__gt=conf.COMPRESS_MIN)
        .values_list("tenant_id", "key")
    )


def memories_compress() -> int:
    """Compress every topic with more than COMPRESS_MIN members; returns how many summaries."""
    made = 0
    for tenant_id, key in list(_crowded_scopes()):
        rows = list(
            Memory.objects.filter(
                tenant_id=tenant_id,
                status=Memory.Status.ACTIVE,
                memory_type=Memory.Type.SEMANTIC,
                acl=[key],
            ).order_by("created_at", "id")
        )
        for topic in topics(rows):
            if len(topic) > conf.COMPRESS_MIN:
                memory_compress_topic(memories=topic)
                made += 1
    return made


@transaction.atomic
def memory_restore(*, memories, user, reason: str = "admin:restore") -> int:
    """Compressed originals back to active; a summary whose originals are all back is archived."""
    originals = list(memories.filter(status=Memory.Status.COMPRESSED))
    ids = [m.pk for m in originals]
    summary_ids = set(
        MemoryLink.objects.filter(source_id__in=ids, kind=MemoryLink.Kind.COMPRESSED_INTO).values_list(
            "target_id", flat=True
        )
    )
    count = memory_set_status(
        memories=Memory.objects.filter(pk__in=ids), status=Memory.Status.ACTIVE, user=user, reason=reason
    )
    MemoryLink.objects.filter(source_id__in=ids, kind=MemoryLink.Kind.COMPRESSED_INTO).delete()
    emptied = Memory.objects.filter(pk__in=summary_ids).exclude(
        links_in__kind=MemoryLink.Kind.COMPRESSED_INTO
    )
    memory_set_status(memories=emptied, status=Memory.Status.ARCHIVED, user=user, reason=reason)
    return count


def compressed_expire() -> int:
    """Delete originals compressed more than COMPRESSED_KEEP_DAYS ago (their summary stays)."""
    cutoff = timezone.now() - timedelta(days=conf.COMPRESSED_KEEP_DAYS)
    done = 0
    for memory in Memory.objects.filter(status=Memory.Status.COMPRESSED, updated_at__lt=cutoff):
        with transaction.atomic():
            memory_id = memory.pk
            _remove(memory=memory, user=None, reason="job:compressed-expired")
            _audit(
                action="memory.delete",
                memory=memory,
                user=None,
                memory_id=memory_id,
                detail={"reason": "compressed-expired"},
            )
        done += 1
    return done
