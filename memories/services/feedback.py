"""Feedback on a memory (adopted / ignored / corrected) and the quality it moves."""

from __future__ import annotations

from django.db import transaction

from almanac.errors import ApplicationError
from memories.constants import QUALITY_MAX, QUALITY_MIN, QUALITY_STEP
from memories.models import Feedback, Memory


@transaction.atomic
def memory_feedback(*, memory: Memory, user, signal: str) -> Feedback:
    """Move the memory's quality: adopted up, ignored/corrected down, kept within [0.2, 2.0].

    Each user's opinion counts once: the same signal again from the same user is recorded
    but moves nothing (one reader sending "ignored" over and over would otherwise bury a
    memory the whole department relies on); a changed signal replaces that user's earlier
    one (its step is undone, the new one applied), so alternating signals cannot ratchet it.
    """
    if signal not in QUALITY_STEP:
        raise ApplicationError(f"unknown signal {signal!r}", status_code=422)
    memory = Memory.objects.select_for_update().filter(pk=memory.pk).first()
    if memory is None:  # deleted since the caller read it
        raise ApplicationError("memory not found", status_code=404)
    before = memory.quality
    last = Feedback.objects.filter(memory=memory, user=user).order_by("-created_at", "-id").first()
    if last is None or last.signal != signal:
        step = QUALITY_STEP[signal]
        if last is not None and last.signal in QUALITY_STEP:
            step /= QUALITY_STEP[last.signal]
        memory.quality = round(min(QUALITY_MAX, max(QUALITY_MIN, before * step)), 4)
        memory._history_user = user
        memory._change_reason = f"feedback:{signal}"
        memory.save(update_fields=["quality", "updated_at"])
    return Feedback.objects.create(
        memory=memory, user=user, signal=signal, quality_before=before, quality_after=memory.quality
    )
