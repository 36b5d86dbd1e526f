"""django-q2 tasks of the memories app: they take ids, load, guard and delegate (docs/style.md, Tasks)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from almanac.embedding_columns import second_fill
from almanac.queue import coalesced
from memories.models import Memory
from memories.services.compression import compressed_expire, memories_compress
from memories.services.decay import memories_decay
from memories.services.extraction import session_extract
from memories.services.touches import memory_touch
from memories.versions import UPGRADE_FIELDS, upgrade

SCHEDULES = [
    {"name": "memories-decay", "func": "memories.tasks.memory_decay_task", "minutes": 60},
    {"name": "memories-compress", "func": "memories.tasks.memory_compress_task", "minutes": 24 * 60},
    {"name": "memories-upgrade", "func": "memories.tasks.memory_upgrade_task", "minutes": 60},
]


def session_extract_task(session_id: int) -> dict:
    return session_extract(session_id=session_id)


@coalesced
def memory_second_fill_task() -> int:
    """Fill the second encoder's vectors of the memories that have none (new or rewritten
    ones); coalesced, so a burst of writes is one run."""
    return second_fill(Memory)


def memory_touch_task(memory_ids: list[int], at: str) -> int:
    """Record recall hits. Retrying re-counts them, which only nudges the decay signal."""
    return memory_touch(memory_ids=memory_ids, at=datetime.fromisoformat(at))


def memory_decay_task(tenant_id: int | None = None) -> int:
    """Archive active memories unused for the decay period whose importance is below the
    threshold (the tenant's lifecycle settings; kept, not retrieved). Idempotent: an archived
    memory is no longer a candidate."""
    return memories_decay(tenant_id=tenant_id)


def memory_compress_task(tenant_id: int | None = None) -> dict:
    """Daily (or one tenant's "Run now"): compress crowded topics, then delete originals
    compressed long enough ago."""
    return {
        "summaries": memories_compress(tenant_id=tenant_id),
        "expired": compressed_expire(tenant_id=tenant_id),
    }


UPGRADE_BATCH = 500
UPGRADE_MAX_BATCHES = 200  # per run: a huge backlog is worked off over several hourly runs
UPGRADE_REASON = "job:schema-upgrade"


def memory_upgrade_task(batch: int = UPGRADE_BATCH, max_batches: int = UPGRADE_MAX_BATCHES) -> int:
    """Rewrite rows of an older `schema_version` as the current one (what every read already
    serves them as: `memories.versions`), `batch` at a time; returns how many.

    Idempotent: an upgraded row is no longer selected. Each batch is one transaction whose
    rows are claimed with `skip_locked`, so two runs (or a retry) never rewrite a row twice
    and never wait on a writer; a row locked by one is left for the next run.
    `updated_at` is not touched: the fact did not change, and recency reads it."""
    done = 0
    for _ in range(max_batches):
        ids = list(
            Memory.objects.filter(schema_version__lt=Memory.SCHEMA_VERSION)
            .order_by("schema_version", "id")
            .values_list("id", flat=True)[:batch]
        )
        if not ids:
            break
        upgraded = memory_upgrade_rows(ids)
        if not upgraded:  # all of them locked by writers now: the next run takes them
            break
        done += upgraded
    return done


@transaction.atomic
def memory_upgrade_rows(memory_ids: list[int]) -> int:
    rows = (
        Memory.objects.filter(id__in=memory_ids, schema_version__lt=Memory.SCHEMA_VERSION)
        .defer("embedding", "tokens", "tf")
        .select_for_update(skip_locked=True, of=("self",))
    )
    count = 0
    for memory in rows:
        # Read, it was upgraded already (`Memory.from_db`); an instance loaded otherwise is upgraded here.
        upgrade(memory)
        memory._history_user = None
        memory._change_reason = UPGRADE_REASON
        memory.save(update_fields=list(UPGRADE_FIELDS))
        count += 1
    return count
