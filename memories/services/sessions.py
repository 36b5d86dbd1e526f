"""Working memory: sessions, turns, compression points and tool-output truncation."""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django_q.tasks import async_task

from almanac.errors import ApplicationError
from almanac.search.text import detect_lang
from almanac.search.tokens import count_tokens, truncate_tokens
from almanac.text.facts import fact_signature, key_facts
from almanac.text.filler import LEADING_FILLER, is_filler
from almanac.text.normalize import normalize
from almanac.text.sentences import split_sentences
from memories.models import ConversationSession, Turn
from memories.selectors import window_turns
from memories.services.common import clean_text, log
from skills.events import actor_fields, bounded, scope_fields
from skills.services import SkillFailed, skill_run
from skills.signals import domain_event

_SURROGATE = re.compile(r"[\ud800-\udfff]")

ROLES_IN = ("user", "assistant", "tool")


def session_create(*, user, title: str = "") -> ConversationSession:
    profile = getattr(user, "profile", None)
    if profile is None:
        raise ApplicationError("user has no tenant", status_code=404)
    if "\x00" in title or len(title) > 300:
        raise ApplicationError("title must be at most 300 characters without NUL bytes", status_code=422)
    return ConversationSession.objects.create(tenant_id=profile.tenant_id, user=user, title=title.strip())


def _more_line(n: int, zh: bool) -> str:
    return f"…等 {n} 条" if zh else f"… and {n} more"


def _dump(value) -> str:
    kept = json.dumps(value, ensure_ascii=False, indent=None)
    if _SURROGATE.search(kept):  # an escaped lone surrogate ("\\ud800") is not text
        kept = json.dumps(value, indent=None)  # it stays an escape
    return kept


def _longest_list(data: dict) -> tuple[dict, str] | None:
    """(the object holding it, its key): the longest list value inside a JSON object, at
    any depth of objects (`{"results": [...], "total": 900}`, `{"data": {"items": [...]}}`)."""
    best, size = None, -1
    stack = [data]  # no recursion: the JSON may nest as deep as the parser allowed
    while stack:
        obj = stack.pop()
        for key, value in obj.items():
            if isinstance(value, list) and len(value) > size:
                best, size = (obj, key), len(value)
            elif isinstance(value, dict):
                stack.append(value)
    return best


def _truncate_json(data, max_items: int, zh: bool) -> str | None:
    """A JSON list, an object's longest list (else its keys) cut to `max_items`; None when
    nothing is longer."""
    if isinstance(data, dict):
        found = _longest_list(data)
        if found is not None and len(found[0][found[1]]) > max_items:
            parent, key = found
            more = len(parent[key]) - max_items
            parent[key] = parent[key][:max_items]
            return f"{_dump(data)}\n{_more_line(more, zh)}"
        if len(data) <= max_items:
            return None
        # No long list, but many keys (a map of id → record): its first keys are its items.
        return f"{_dump(dict(list(data.items())[:max_items]))}\n{_more_line(len(data) - max_items, zh)}"
    if len(data) <= max_items:
        return None
    return f"{_dump(data[:max_items])}\n{_more_line(len(data) - max_items, zh)}"


def tool_output_truncate(content: str, max_items: int | None = None) -> str:
    """Keep the first TOOL_OUTPUT_MAX_ITEMS items of a long tool output: of a JSON list, of
    the longest list in a JSON object (or of its keys), or lines."""
    max_items = max_items or settings.TOOL_OUTPUT_MAX_ITEMS
    zh = detect_lang(content) == "zh"
    stripped = content.strip()
    if stripped[:1] in ("[", "{"):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to parse: lines
            data = None
        if isinstance(data, list | dict):
            try:
                return _truncate_json(data, max_items, zh) or content
            except (RecursionError, ValueError):  # parsed, but nested too deep to write back: lines
                pass
    lines = [line for line in re.split(r"\r?\n", stripped) if line.strip()]
    if len(lines) > max_items:
        return "\n".join(lines[:max_items]) + "\n" + _more_line(len(lines) - max_items, zh)
    return content


@transaction.atomic
def turn_add(*, session: ConversationSession, role: str, content: str) -> Turn:
    """Append a turn; at each compression point (every WORKING_COMPRESS_EVERY turns), and
    whenever the window would lose a turn in between, fold into the summary what is about to leave it."""
    if role not in ROLES_IN:
        raise ApplicationError(f"role must be one of {', '.join(ROLES_IN)}", status_code=422)
    content = clean_text(content, field="content", max_chars=settings.MEMORY_MAX_TURN_CHARS)
    # Lock the session row: turn order and compression points are per session and serial.
    session = ConversationSession.objects.select_for_update().get(pk=session.pk)
    if session.status != ConversationSession.Status.OPEN:
        raise ApplicationError("session has ended", status_code=409)
    if role == Turn.Role.TOOL:
        content = tool_output_truncate(content)
    order = (Turn.objects.filter(session=session).aggregate(m=Max("order"))["m"] or 0) + 1
    turn = Turn.objects.create(
        session=session, order=order, role=role, content=content, tokens=count_tokens(content)
    )
    session.turn_count += 1
    session.save(update_fields=["turn_count"])
    if session.turn_count % max(settings.WORKING_COMPRESS_EVERY, 1) == 0 or _window_drops_a_turn(session):
        session_compress(session=session)
    return turn


def _summary_share() -> int:
    """The summary's token share of the window."""
    return max(settings.WORKING_WINDOW_TOKENS // 4, 32)


def _window_drops_a_turn(session: ConversationSession) -> bool:
    """An unfolded turn the window no longer shows (a long turn pushed it out by tokens, or a
    window smaller than the compression period): it must be folded now, not at the next point."""
    window = window_turns(
        session=session, max_turns=settings.WORKING_WINDOW_TURNS, max_tokens=settings.WORKING_WINDOW_TOKENS
    )
    shown = sum(1 for t in window if t.role != Turn.Role.SUMMARY)
    return Turn.objects.filter(session=session, folded=False).exclude(role=Turn.Role.SUMMARY).count() > shown


def _turns_to_keep(turns: list[Turn]) -> int:
    """How many of the newest unfolded turns stay unfolded at a compression point: as many
    as the window will still show after the WORKING_COMPRESS_EVERY - 1 turns that may come
    before the next point (at least half the window), within the tokens the summary leaves."""
    max_turns = settings.WORKING_WINDOW_TURNS
    ahead = max(settings.WORKING_COMPRESS_EVERY, 1) - 1
    limit = max(max_turns - ahead, (max_turns + 1) // 2, 1)
    budget = settings.WORKING_WINDOW_TOKENS - _summary_share()
    kept = 0
    for turn in reversed(turns):
        if kept >= limit or (kept and turn.tokens > budget):
            break
        kept += 1
        budget -= turn.tokens
    return kept


def _summarize(*, session: ConversationSession, text: str, max_tokens: int) -> str:
    try:
        out = skill_run(
            name="summarize",
            input={"text": text, "max_tokens": max_tokens, "title": session.title or "conversation"},
            trigger="working_memory",
            tenant=session.tenant,
        )
        summary = (out or {}).get("summary", "").strip()
    except SkillFailed as exc:
        log.warning("summarize failed for session %s: %s; using the extractive digest", session.pk, exc)
        summary = ""
    if not summary or (not key_facts(text) <= key_facts(summary) and count_tokens(text) <= max_tokens):
        # No summary, or one that lost a number, date, id or name the digest still fits with.
        summary = text
    return truncate_tokens(summary, max_tokens)


def session_compress(*, session: ConversationSession) -> Turn | None:
    """A compression point: the previous summary and the turns about to leave the window
    become one summary, so every turn is always in the window or in the summary.

    1. keep the newest turns the window will still show until the next point; 2. digest
    the others (their facts, without filler and repetition) after the previous summary;
    3. summarize that within the summary's token share; 4. mark what it covers folded.
    """
    unfolded = list(Turn.objects.filter(session=session, folded=False).order_by("order"))
    previous = [t for t in unfolded if t.role == Turn.Role.SUMMARY]
    turns = [t for t in unfolded if t.role != Turn.Role.SUMMARY]
    old = turns[: len(turns) - _turns_to_keep(turns)]
    if not old:
        return None
    before = previous[-1].content if previous else ""
    text = "\n".join(part for part in (before, working_digest(old, known=before)) if part)
    summary = _summarize(session=session, text=text, max_tokens=_summary_share())
    earlier = (
        previous[-1].meta.get("covers_orders", previous[-1].meta.get("folded_orders", [])) if previous else []
    )
    covered = [*earlier, *(t.order for t in old)]
    turn = Turn.objects.create(
        session=session,
        order=max(t.order for t in unfolded) + 1,
        role=Turn.Role.SUMMARY,
        content=summary,
        tokens=count_tokens(summary),
        meta={"folded_orders": [t.order for t in old], "covers_orders": covered},
    )
    Turn.objects.filter(pk__in=[t.pk for t in previous + old]).update(folded=True)
    return turn


_NAME = re.compile(r"(?<![\w'-])[A-Z][\w'-]*")


def _checkable(text: str) -> set[str]:
    """Numbers, dates, ids and names (a capitalised word not opening a sentence, not "I")."""
    names = {
        m.group().lower()
        for sentence in split_sentences(text)
        for m in _NAME.finditer(sentence, len(sentence) - len(sentence.lstrip()) + 1)
        if not m.group().startswith(("I'", "I’")) and m.group() != "I"
    }
    return set(fact_signature(text)[0]) | names


def working_digest(turns: list[Turn], *, known: str = "") -> str:
    """What the turns said, shorter: one line per turn with content, its sentences without
    greetings, thanks and acknowledgements; the assistant's and tools' sentences only where
    they add a fact (a number, date, id or name) not already said; nothing said twice."""
    seen = _checkable(known) if known else set()
    said = set()
    lines: list[tuple[str, list[str]]] = []
    for turn in turns:
        kept = []
        for sentence in split_sentences(normalize(turn.content)):
            plain = LEADING_FILLER.sub("", sentence).strip()
            if not plain or is_filler(plain) or plain.lower() in said:
                continue
            facts = _checkable(plain)
            if turn.role != Turn.Role.USER and (facts <= seen or plain.endswith(("?", "？"))):
                continue  # the assistant repeating, asking, or being polite
            said.add(plain.lower())
            seen |= facts
            kept.append(plain)
        if kept and lines and lines[-1][0] == turn.role:
            lines[-1][1].extend(kept)  # one line per run of turns by the same speaker
        elif kept:
            lines.append((turn.role, kept))
    return "\n".join(f"{role}: {' '.join(kept)}" for role, kept in lines)


@transaction.atomic
def session_end(*, session: ConversationSession) -> ConversationSession:
    """End the session and extract its memories in the background (idempotent: ending twice is fine)."""
    session = ConversationSession.objects.select_for_update().get(pk=session.pk)
    if session.status == ConversationSession.Status.OPEN:
        session.status = ConversationSession.Status.ENDED
        session.ended_at = timezone.now()
        session.save(update_fields=["status", "ended_at"])
        _announce_ended(session)
    if session.extracted_at is None:
        session_id = session.pk
        transaction.on_commit(lambda: async_task("memories.tasks.session_extract_task", session_id))
    return session


def _announce_ended(session: ConversationSession) -> None:
    """`session.ended` for the skills subscribed to it (enqueued after the commit), once:
    ending an ended session again announces nothing."""
    domain_event.send(
        sender=ConversationSession,
        event="session.ended",
        payload=session_ended_payload(session),
        tenant_id=session.tenant_id,
    )


def session_ended_payload(session: ConversationSession) -> dict:
    """The session's turns as `role: text` lines (summaries of folded turns left out: the
    turns themselves are kept), up to EVENT_TEXT_CHARS; the session is its user's own."""
    turns = Turn.objects.filter(session=session).exclude(role=Turn.Role.SUMMARY).order_by("order")
    text, truncated = bounded(
        "\n".join(f"{role}: {content}" for role, content in turns.values_list("role", "content"))
    )
    key = session.user.profile.username
    return {
        "event_id": f"session:{session.pk}",
        "session_id": session.pk,
        "title": session.title,
        **actor_fields(session.user),
        **scope_fields("user", key),
        "turn_count": session.turn_count,
        "started_at": session.started_at.isoformat(),
        "ended_at": session.ended_at.isoformat(),
        "text": text,
        "text_truncated": truncated,
    }
