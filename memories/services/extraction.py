"""Memories from an ended session (docs/design.md, Memories: write).

chunk (256/32 tokens) → embed → skip chunks already covered → fact_extract skill → junk filter →
scope attribution → semantic/episodic memories (dedup within scope). Idempotent: each
handled chunk leaves a `SessionChunk` row keyed by its digest; a re-run skips them.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from almanac.dates import year_problem
from almanac.search.embeddings import embed
from almanac.search.text import CJK, detect_lang
from almanac.search.tokens import count_tokens
from almanac.text.dates import RESOLVED_DATE, resolve_relative_dates
from almanac.text.duplicates import says_the_same
from almanac.text.filler import is_filler
from almanac.text.sentences import sentence_ends
from memories.constants import (
    DEDUP_CANDIDATES,
    JUNK_PHRASES,
    JUNK_WORDS,
    MIN_FACT_CHARS,
)
from memories.models import ConversationSession, Memory, SessionChunk, Turn
from memories.selectors import nearest
from memories.services.attribution import scope_attribution
from memories.services.common import log
from memories.services.dates import parse_occurred
from memories.services.memories import memory_create
from skills.services import skill_run

TURN_END = re.compile(r"\n")
CLAUSE = re.compile(r"[，、：]|[,:](?!\d)")
SPACE = re.compile(r"\s+")
# A number with its unit or currency ("35万元", "$3.5M", "1,200 元", "三十五万"): never cut inside.
NUMBER = re.compile(
    r"(?:[$€£¥￥]\s?)?\d(?:[\d,.]*\d)?(?:\s?(?:万元|亿元|千元|万|亿|千|百|元|块|美元|欧元|%|％|"
    r"[kKmMbB](?![A-Za-z])|USD|RMB|CNY|EUR|million|billion|thousand|dollars?|euros?))?|"
    r"[〇零一二三四五六七八九十百千万亿两]{2,}(?:元|块)?"
)
# A short text is still a fact when it has a number or says who someone is.
SUBSTANCE = re.compile(r"\d|我叫|我是|我姓|名字|\b(?:call me|my name|i am called|i'm called)\b", re.I)
# The day the extractor writes after a relative date ("上周五（2025-03-14）"): not part of what
# a chunk that says "上周五" is compared on (the event's own date is).
TYPE_OF_FACT = {
    "event": Memory.Type.EPISODIC,
    "preference": Memory.Type.SEMANTIC,
    "fact": Memory.Type.SEMANTIC,
    "decision": Memory.Type.SEMANTIC,
}


def chunk_spans(text: str, size: int = 256, overlap: int = 32) -> list[tuple[int, int, int]]:
    """(context start, start, end) of each chunk of `text`: chunks of at most `size` tokens
    (cl100k, `count_tokens`), the overlap included, cut at a turn's or sentence's end, else at
    a clause mark (`，、：`) or a space, never inside a number ("35万元"), and at a token
    count only where there is nothing else. Each chunk after the first begins with about
    `overlap` tokens of the text before it (`context start` .. `start`): whole sentences
    where they fill three quarters of it, else from a clause, word or CJK character. That
    part is context for the extractor (what "they" or "上周五" refers to), never extracted
    again: a sentence is read as a fact in one chunk only."""
    chunks: list[tuple[int, int, int]] = []
    start = len(text) - len(text.lstrip())
    while start < len(text.rstrip()):
        context = _overlap_start(text, chunks[-1][1], start, overlap) if chunks else start
        budget = max(size - count_tokens(text[context:start]), max(size // 2, 1))
        end, _ = _cut(text, start, _fits(text, start, budget))
        end = max(end, start + 1)
        chunks.append((context, start, end))
        start = end + len(text[end:]) - len(text[end:].lstrip())
    return chunks


def chunk_text(text: str, size: int = 256, overlap: int = 32) -> list[str]:
    """The chunks of `chunk_spans`, each with its overlap."""
    return [text[c:e].strip() for c, _, e in chunk_spans(text, size, overlap) if text[c:e].strip()]


def _fits(text: str, start: int, tokens: int) -> int:
    """The furthest end from `start` whose text has at most `tokens` tokens."""
    reach = 8 * tokens + 8  # a token is at most ~8 characters here
    # Only a remainder that could fit is measured whole (measuring the rest of a long
    # session's text for every chunk made chunking quadratic).
    if len(text) - start <= reach and count_tokens(text[start:]) <= tokens:
        return len(text)
    lo, hi = start + 1, min(len(text), start + reach)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[start:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _overlap_start(text: str, floor: int, start: int, overlap: int) -> int:
    """Where the context before `start` begins: the earliest boundary after `floor` from which
    at most `overlap` tokens lead to `start`."""
    if overlap <= 0:
        return start
    lo, hi = floor, start  # the earliest position whose suffix fits
    while lo < hi:
        mid = (lo + hi) // 2
        if count_tokens(text[mid:start]) <= overlap:
            hi = mid
        else:
            lo = mid + 1
    spans = _number_spans(text, lo, start)

    def inside_number(at: int) -> bool:
        return any(begin < at < finish for begin, finish in spans)

    for kind, enough in (("sentence", overlap * 3 // 4), ("clause", 1), ("space", 1)):
        for at in _ends(kind, text, lo, start):
            # Tokens are not additive: "reviewed" after a cut may count more than " reviewed".
            if at < start and not inside_number(at) and enough <= count_tokens(text[at:start]) <= overlap:
                return at
            if at < start and not inside_number(at):
                break  # the earliest such boundary gives too little: try finer ones
    # No boundary (CJK without punctuation): from a character, not inside a number or word.
    at = lo
    while at < start and (
        inside_number(at) or (text[at - 1 : at + 1].isascii() and text[at - 1 : at + 1].isalnum())
    ):
        at += 1
    return at if at < start else start


def _ends(kind: str, text: str, lo: int, hi: int) -> list[int]:
    """Where in `text[lo:hi]` a turn, a sentence (the one rule, `almanac.text.sentences`),
    a clause or a run of blanks ends."""
    if kind == "sentence":
        return sentence_ends(text, lo, hi)
    pattern = {"turn": TURN_END, "clause": CLAUSE, "space": SPACE}[kind]
    return [m.end() for m in pattern.finditer(text, lo, hi)]


def _number_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    return [m.span() for m in NUMBER.finditer(text, max(lo - 40, 0), min(hi + 40, len(text)))]


def _outside_numbers(spans: list[tuple[int, int]], pos: int, floor: int) -> int:
    """`pos`, or the start of the number it falls inside (when that is after `floor`)."""
    for begin, finish in spans:
        if begin < pos < finish:
            return begin if begin > floor else pos
    return pos


def _cut(text: str, start: int, hi: int) -> tuple[int, str]:
    """Where the chunk from `start` (at most up to `hi`) ends, and how: "end", "turn",
    "sentence", "clause" or "fixed".

    A turn's end is taken from a quarter of the chunk on: chunks then begin where turns do,
    so a turn said twice gives the same chunks (handled once, by digest)."""
    if hi >= len(text):
        return len(text), "end"
    spans = _number_spans(text, start, hi)
    span = hi - start
    for kind, floor, how in (
        ("turn", span // 4, "turn"),
        ("sentence", span // 2, "sentence"),
        ("clause", span // 2, "clause"),
        ("space", span // 2, "clause"),
    ):
        cuts = _ends(kind, text, start + floor, hi)
        cuts = [c for c in cuts if _outside_numbers(spans, c, start) == c]
        if cuts:
            return cuts[-1], how
    return _outside_numbers(spans, hi, start), "fixed"


def _weight(text: str) -> int:
    """Characters, a CJK one counting two: "我叫李雷" (8) says about as much as "I'm Bob" (5)."""
    return len(text) + len(CJK.findall(text))


def is_junk(text: str) -> bool:
    """Too short (unless it has a number or a name), or nothing but greetings/thanks/acks (zh + en)."""
    stripped = re.sub(r"[\s\W_]+", " ", text or "", flags=re.UNICODE).strip().lower()
    if _weight(stripped.replace(" ", "")) < MIN_FACT_CHARS and not SUBSTANCE.search(text or ""):
        return True
    if stripped.replace(" ", "") in JUNK_PHRASES or stripped in JUNK_PHRASES or is_filler(text):
        return True  # also what an LLM returns: "Thanks, that's all for now.", "收到，马上处理"
    words = stripped.split()
    if all(w in JUNK_WORDS or w in JUNK_PHRASES for w in words):
        return True
    # Chinese greetings run together: 你好谢谢好的
    rest = stripped.replace(" ", "")
    for phrase in sorted((p for p in JUNK_PHRASES if not p.isascii()), key=len, reverse=True):
        rest = rest.replace(phrase, "")
    return not rest


def skill_inputs(text: str, day: date) -> list[dict]:
    """The `fact_extract` inputs for a text said on `day`: one per chunk, its overlap with the
    chunk before it as `context` (read for references, not extracted again)."""
    inputs = []
    for context, start, end in chunk_spans(
        text, settings.MEMORY_CHUNK_TOKENS, settings.MEMORY_CHUNK_OVERLAP_TOKENS
    ):
        body = text[start:end].strip()
        if not body:
            continue
        item = {"text": body, "session_date": day.isoformat(), "lang": detect_lang(body)}
        if text[context:start].strip():
            item["context"] = text[context:start].strip()
        inputs.append(item)
    return inputs


def _dated_chunks(session: ConversationSession) -> list[tuple[dict, date]]:
    """The skill inputs of the user's turns, each with the day its turns were said: what
    "tomorrow" in it counts from. A session can run over several days; a chunk never
    mixes turns of two days.

    Only the user's own turns: assistant text ("I can help…") would be misread as facts
    about the user."""
    turns = (
        Turn.objects.filter(session=session, role=Turn.Role.USER)
        .order_by("order")
        .values_list("content", "created_at")
    )
    days: list[tuple[date, list[str]]] = []
    for content, created_at in turns:
        day = timezone.localdate(created_at)
        if not days or days[-1][0] != day:
            days.append((day, []))
        days[-1][1].append(content)
    return [(item, day) for day, texts in days for item in skill_inputs("\n".join(texts), day)]


def _digest(session_id: int, chunk: str, day: date) -> str:
    return hashlib.sha256(f"{session_id}\x1f{day.isoformat()}\x1f{chunk}".encode()).hexdigest()


def _covered(*, session: ConversationSession, vector, chunk: str, base: date) -> bool:
    """A visible memory already says this chunk: as close as a duplicate, with the same facts,
    and, for an event, on the same day ("yesterday I had lunch with Dave" said in two
    sessions ten days apart is two lunches)."""
    visible = Memory.objects.visible_to(session.user)
    threshold = settings.MEMORY_DEDUP_THRESHOLD
    close = [
        pk
        for pk, d in nearest(visible, vector, DEDUP_CANDIDATES, tenant_id=session.tenant_id)
        if 1.0 - d > threshold
    ]
    if not close:
        return False
    when = parse_occurred(chunk, base)
    return any(
        says_the_same(chunk, RESOLVED_DATE.sub("", text))
        and (when is None or occurred is None or occurred == when)
        for text, occurred in visible.filter(pk__in=close).values_list("content", "occurred_at")
    )


def _write_fact(*, session: ConversationSession, fact: dict, base: date, digest: str) -> bool:
    text = (fact.get("text") or "").strip()
    if is_junk(text):
        return False
    memory_type = TYPE_OF_FACT.get(fact.get("type"), Memory.Type.SEMANTIC)
    occurred = None
    if memory_type == Memory.Type.EPISODIC:
        occurred = _iso_date(fact.get("occurred_at")) or parse_occurred(text, base)
        if year_problem(occurred, "occurred_at"):
            occurred = None  # a year the service refuses (almanac.dates): the fact, undated
    where = scope_attribution(user=session.user, text=text)
    importance = min(max(float(fact.get("importance") or 0.5), 0.0), 1.0)
    meta = {
        "source": "session",
        "session_id": session.pk,
        "chunk": digest[:16],
        "fact_type": fact.get("type"),
    }
    if where.review:
        meta["review"] = where.review
    memory, duplicate = memory_create(
        owner=session.user,
        content=text[: settings.MEMORY_MAX_CONTENT_CHARS],
        memory_type=memory_type,
        scope=where.scope,
        scope_key=where.scope_key,
        importance=importance,
        meta=meta,
        occurred_at=occurred,
        reason=f"session:{session.pk}",
        kind="preference" if fact.get("kind") == "preference" else None,  # else from meta.fact_type
        key=fact.get("key") or None,
    )
    if duplicate is None and where.review and not memory.needs_review:
        memory.needs_review = True
        memory._change_reason = f"session:{session.pk}"
        memory.save(update_fields=["needs_review"])
    return duplicate is None


def _iso_date(value) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def _extract_chunk(*, session, item: dict, position: int, digest: str, vector, base: date) -> None:
    """One chunk: short reads, then the skill (an LLM with its timeout and retries) outside
    any transaction or lock, then one short transaction that writes what it found unless
    the chunk was handled meanwhile (a session ended twice has two runs going) or the
    session is gone. Idempotent by session and chunk digest (`SessionChunk`)."""
    if SessionChunk.objects.filter(session=session, digest=digest).exists():
        return
    if _covered(session=session, vector=vector, chunk=item["text"], base=base):
        with transaction.atomic():
            _chunk_claim(
                session=session, digest=digest, position=position, outcome=SessionChunk.Outcome.COVERED
            )
        return
    out = skill_run(name="fact_extract", input=item, trigger=f"session:{session.pk}", tenant=session.tenant)
    facts = (out or {}).get("facts") or []
    with transaction.atomic():
        row = _chunk_claim(
            session=session, digest=digest, position=position, outcome=SessionChunk.Outcome.EXTRACTED
        )
        if row is None:
            return
        row.facts = len(facts)
        row.memories_written = sum(
            _write_fact(session=session, fact=f, base=base, digest=digest) for f in facts
        )
        row.save(update_fields=["facts", "memories_written"])


def _chunk_claim(*, session, digest: str, position: int, outcome: str) -> SessionChunk | None:
    """In the caller's transaction: the chunk's `SessionChunk` row, new, or None when a
    concurrent run handled the chunk first or the session was deleted. One run at a time
    gets here for a chunk (an advisory lock to the end of the transaction)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"chunk:{digest}"])
    if SessionChunk.objects.filter(session=session, digest=digest).exists():
        return None
    if not ConversationSession.objects.filter(pk=session.pk).exists():
        return None
    return SessionChunk.objects.create(session=session, digest=digest, position=position, outcome=outcome)


def session_extract(*, session_id: int) -> dict:
    """Extract memories of one ended session. Safe to run again: handled chunks are skipped.

    1. chunk the user's turns; 2. drop chunks handled before (digest); 3. embed the rest;
    4. per chunk: skip if covered, else fact_extract (no transaction open), then write in
    one short transaction (`_extract_chunk`).
    """
    session = ConversationSession.objects.select_related("user", "tenant").filter(pk=session_id).first()
    if session is None or session.status != ConversationSession.Status.ENDED:
        return {"skipped": "missing or still open"}
    dated = _dated_chunks(session)
    # The day is part of what was said: "Yesterday I had coffee with Carol" on two days of
    # one session is two events. The digest is of what the chunk extracts, not its context.
    digests = [_digest(session.pk, item["text"], day) for item, day in dated]
    done = set(
        SessionChunk.objects.filter(session=session, digest__in=digests).values_list("digest", flat=True)
    )
    todo = []
    for i, ((c, day), d) in enumerate(zip(dated, digests, strict=True)):
        if d not in done:  # a chunk repeated on one day of the session (same text) is handled once
            done.add(d)
            todo.append((i, c, d, day))
    # Embedded as the extractor writes it (relative dates followed by their day), to find
    # the memories an earlier run of the same day made from it.
    vectors = embed([resolve_relative_dates(item["text"], day) for _, item, _, day in todo]) if todo else []
    failures = 0
    for (position, item, digest, day), vector in zip(todo, vectors, strict=True):
        try:
            _extract_chunk(
                session=session,
                item=item,
                position=position,
                digest=digest,
                vector=vector,
                base=day,
            )
        except Exception:
            failures += 1
            log.exception("extraction of chunk %s of session %s failed", position, session.pk)
    if failures:
        raise RuntimeError(f"{failures} chunk(s) of session {session.pk} failed; a retry resumes from them")
    # A session deleted meanwhile is left alone (no row to update).
    ConversationSession.objects.filter(pk=session.pk, extracted_at__isnull=True).update(
        extracted_at=timezone.now()
    )
    return {"chunks": len(dated), "new": len(todo)}
