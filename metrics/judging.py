"""Judging recorded context calls: repeats and adoption (docs/operations.md, "Metrics").

Run by the rollup over the calls whose windows are still open; each judgment is stored on
the call (`repeat_of`, `adopted_memory_ids`, `adopted_section_ids`) and is final once the
call is older than its windows.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db.models import Q

from almanac.models import AuditEvent
from almanac.search.text import segment
from memories.models import Feedback, Memory, Turn
from metrics.models import ContextCall
from wiki.models import PageSection

# What makes an adopted memory count as not adopted after all: it was corrected.
CORRECTIONS = ("memory.update", "memory.supersede", "memory.delete", "memory.purge")


def tokens(text: str) -> frozenset[str]:
    return frozenset(segment(text))


def similar(a: frozenset, b: frozenset) -> bool:
    """Near-identical tasks: the Jaccard overlap of their tokens reaches METRICS_REPEAT_SIMILARITY."""
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) >= settings.METRICS_REPEAT_SIMILARITY


def questions(calls: list[ContextCall]) -> list[ContextCall]:
    """The calls that ask a question: first passes (a cursor's next pass is the same question)
    that are not the same task again in the same session. `calls` ordered by time."""
    seen: set[tuple] = set()
    out = []
    for call in calls:
        group = (call.user_id, call.session_id or f"call:{call.pk}", call.task_digest)
        if call.passes == 0 and group not in seen:
            seen.add(group)
            out.append(call)
    return out


def judge_repeats(*, tenant_id: int, since) -> int:
    """Set `repeat_of` on each question since `since` that repeats an earlier question of
    the same user (another session, or none) within METRICS_REPEAT_DAYS. Returns how many."""
    window = timedelta(days=settings.METRICS_REPEAT_DAYS)
    rows = (
        ContextCall.objects.filter(tenant_id=tenant_id, at__gte=since - window, passes=0)
        .exclude(via=ContextCall.Via.PREVIEW)
        .order_by("user_id", "at", "pk")
        .only("pk", "user_id", "session_id", "task", "task_digest", "passes", "at", "repeat_of_id")
    )
    by_user: dict[int, list[ContextCall]] = defaultdict(list)
    for call in rows:
        by_user[call.user_id].append(call)
    changed, repeats = [], 0
    for calls in by_user.values():
        asked = [(call, tokens(call.task)) for call in questions(calls)]
        for i, (call, words) in enumerate(asked):
            if call.at < since:
                continue
            earlier = next(
                (
                    prev
                    for prev, prev_words in reversed(asked[:i])
                    if call.at - prev.at <= window
                    and (prev.session_id is None or prev.session_id != call.session_id)
                    and (prev.task_digest == call.task_digest or similar(words, prev_words))
                ),
                None,
            )
            repeats += earlier is not None
            if call.repeat_of_id != getattr(earlier, "pk", None):
                call.repeat_of_id = getattr(earlier, "pk", None)
                changed.append(call)
    ContextCall.objects.bulk_update(changed, ["repeat_of"])
    return repeats


def quoted(text: str, said: frozenset[str]) -> bool:
    """One line of `text` (of at least 3 tokens) has METRICS_QUOTE_SHARE of its tokens in `said`."""
    for line in text.splitlines():
        words = tokens(line)
        if len(words) >= 3 and len(words & said) / len(words) >= settings.METRICS_QUOTE_SHARE:
            return True
    return False


def later_turns(call: ContextCall, until) -> frozenset[str]:
    """The tokens of the assistant's turns in the call's session after it (within the window)."""
    if call.session_id is None:
        return frozenset()
    texts = Turn.objects.filter(
        session_id=call.session_id, role=Turn.Role.ASSISTANT, created_at__gt=call.at, created_at__lte=until
    ).values_list("content", flat=True)
    return tokens("\n".join(texts))


def memory_signals(calls: list[ContextCall], until) -> tuple[set, set]:
    """(memory, user) pairs given positive feedback, and memories corrected, since the
    earliest of `calls` (each then checked against its own call's window)."""
    ids = {pk for call in calls for pk in call.memory_ids}
    start = min((call.at for call in calls), default=until)
    feedback = Feedback.objects.filter(memory_id__in=ids, created_at__gte=start, created_at__lte=until)
    adopted = defaultdict(list)
    corrected = defaultdict(list)
    for memory_id, user_id, signal, at in feedback.values_list(
        "memory_id", "user_id", "signal", "created_at"
    ):
        if signal == Feedback.Signal.ADOPTED:
            adopted[(memory_id, user_id)].append(at)
        elif signal == Feedback.Signal.CORRECTED:
            corrected[memory_id].append(at)
    events = AuditEvent.objects.filter(
        object_type="memory",
        object_id__in=[str(pk) for pk in ids],
        action__in=CORRECTIONS,
        created_at__gte=start,
        created_at__lte=until,
    ).values_list("object_id", "created_at")
    for object_id, at in events:
        corrected[int(object_id)].append(at)
    return adopted, corrected


def judge_adoption(*, tenant_id: int, since, now) -> None:
    """Set `adopted_memory_ids` / `adopted_section_ids` of the calls since `since`.

    A memory is adopted when, within METRICS_ADOPTION_DAYS after the call, its user gave it
    positive feedback or the session's assistant quoted it, and nobody corrected, superseded,
    deleted or purged it in that window (and it still exists). A page section is adopted when
    quoted and it still exists.
    """
    window = timedelta(days=settings.METRICS_ADOPTION_DAYS)
    calls = list(
        ContextCall.objects.filter(tenant_id=tenant_id, at__gte=since)
        .exclude(via=ContextCall.Via.PREVIEW)
        .exclude(Q(memory_ids=[]) & Q(section_ids=[]))
        .order_by("at")
    )
    if not calls:
        return
    adopted, corrected = memory_signals(calls, now)
    memories = dict(
        Memory.objects.filter(pk__in={pk for c in calls for pk in c.memory_ids}).values_list("pk", "content")
    )
    sections = dict(
        PageSection.objects.filter(pk__in={pk for c in calls for pk in c.section_ids}).values_list(
            "pk", "content"
        )
    )
    for call in calls:
        until = min(now, call.at + window)
        said = later_turns(call, until)

        def within(times, call=call, until=until):
            return any(call.at <= at <= until for at in times)

        call.adopted_memory_ids = [
            pk
            for pk in call.memory_ids
            if pk in memories
            and not within(corrected.get(pk, []))
            and (within(adopted.get((pk, call.user_id), [])) or quoted(memories[pk], said))
        ]
        call.adopted_section_ids = [
            pk for pk in call.section_ids if pk in sections and quoted(sections[pk], said)
        ]
    ContextCall.objects.bulk_update(calls, ["adopted_memory_ids", "adopted_section_ids"], batch_size=500)
