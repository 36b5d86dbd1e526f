"""django-q2 tasks of the memories app: they take ids, load, guard and delegate (STYLE §4)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from memories import services
from memories.models import Memory

SCHEDULES = [
    {"name": "memories-decay", "func": "memories.tasks.memory_decay_task", "minutes": 60},
    {"name": "memories-compress", "func": "memories.tasks.memory_compress_task", "minutes": 24 * 60},
]

DECAY_AFTER_DAYS = 180
DECAY_BELOW_IMPORTANCE = 0.3


def session_extract_task(session_id: int) -> dict:
    return services.session_extract(session_id=session_id)


def memory_touch_task(memory_ids: list[int], at: str) -> int:
    """Record recall hits. Retrying re-counts them, which only nudges a ranking signal."""
    return services.memory_touch(memory_ids=memory_ids, at=datetime.fromisoformat(at))


def memory_decay_task() -> int:
    """Archive active memories unused for 180 days with importance < 0.3 (kept, not retrieved)."""
    cutoff = timezone.now() - timedelta(days=DECAY_AFTER_DAYS)
    stale = Memory.objects.filter(status=Memory.Status.ACTIVE, importance__lt=DECAY_BELOW_IMPORTANCE).filter(
        last_access__lt=cutoff
    ) | Memory.objects.filter(
        status=Memory.Status.ACTIVE,
        importance__lt=DECAY_BELOW_IMPORTANCE,
        last_access__isnull=True,
        created_at__lt=cutoff,
    )
    return services.memory_set_status(
        memories=stale, status=Memory.Status.ARCHIVED, user=None, reason="job:decay"
    )


def memory_compress_task() -> dict:
    """Daily: compress crowded topics, then delete originals compressed long enough ago."""
    return {"summaries": services.memories_compress(), "expired": services.compressed_expire()}
