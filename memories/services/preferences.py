"""Preferences from every ended session: `preference_extract` runs on `session.ended` (a
code subscription, `memories.receivers`) and what it finds becomes `kind: preference`
memories, in the scope the speaker's words put them (`scope_attribution`, as the session
extractor does). A preference that states another value for the same thing ("以后报销都走
电子流程" after "以后报销都走纸质流程") supersedes the older one (`memory_create`).
Idempotent: a redelivered event writes the same memories again, which are duplicates.
"""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from almanac.search.text import detect_lang
from memories.models import ConversationSession, Memory, Turn
from memories.services.attribution import scope_attribution
from memories.services.extraction import is_junk
from memories.services.memories import memory_create

MAX_TEXT_CHARS = 500_000  # the skill's input limit; a longer session is read from its end


def _ended_session(payload: dict) -> ConversationSession | None:
    return (
        ConversationSession.objects.select_related("user", "tenant")
        .filter(pk=payload.get("session_id"), status=ConversationSession.Status.ENDED, user__isnull=False)
        .first()
    )


def session_preference_input(payload: dict) -> dict | None:
    """The skill's input for a `session.ended` payload: the user's own turns (what the
    assistant or a tool said is not the user's preference), or None when there are none."""
    session = _ended_session(payload)
    if session is None:
        return None
    texts = (
        Turn.objects.filter(session=session, role=Turn.Role.USER)
        .order_by("order")
        .values_list("content", flat=True)
    )
    text = "\n".join(texts).strip()[-MAX_TEXT_CHARS:]
    if not text:
        return None
    day = timezone.localdate(session.ended_at or timezone.now())
    return {"text": text, "session_date": day.isoformat(), "lang": detect_lang(text)}


def session_preferences_keep(payload: dict, output: dict) -> list[int]:
    """The preferences found become memories of the session's user; returns their ids
    (a duplicate's id where one said it already)."""
    session = _ended_session(payload)
    if session is None:
        return []
    method = "llm" if getattr(output, "used_llm", False) else "offline"
    ids = []
    for fact in output.get("facts") or []:
        memory = _keep(session=session, fact=fact, method=method)
        if memory is not None:
            ids.append(memory.pk)
    return ids


def _keep(*, session: ConversationSession, fact: dict, method: str) -> Memory | None:
    text = (fact.get("text") or "").strip()
    if is_junk(text):
        return None
    where = scope_attribution(user=session.user, text=text)
    meta = {"source": "session", "session_id": session.pk, "skill": "preference_extract", "method": method}
    if where.review:
        meta["review"] = where.review
    memory, duplicate = memory_create(
        owner=session.user,
        content=text[: settings.MEMORY_MAX_CONTENT_CHARS],
        memory_type=Memory.Type.SEMANTIC,
        scope=where.scope,
        scope_key=where.scope_key,
        importance=min(max(float(fact.get("importance") or 0.6), 0.0), 1.0),
        meta=meta,
        reason=f"session:{session.pk}",
        kind=Memory.Kind.PREFERENCE,
        # The offline rules' key is the one `memory_create` reads from the text (passed
        # again, an English stem would be stemmed twice); a model's is its own reading.
        key=(fact.get("key") or None) if method == "llm" else None,
    )
    if duplicate is None and where.review and not memory.needs_review:
        memory.needs_review = True
        memory._change_reason = f"session:{session.pk}"
        memory.save(update_fields=["needs_review"])
    return memory
