"""Page summaries that keep the newest facts, kept apart from the sections.

A summary records which sections it was made from (`summary_section_ids`) and their
digest; it is regenerated only when that set or its text changed, and shown only to a
reader who may see every one of those sections (see `selectors.page_summary_for_user`).

What a summary must keep are the facts: amounts, dates, a contract's term, owners,
decisions and states (`almanac.text.statements`), each with the date and the author of the line
that said it. Two values of one thing on a page (the yearly price: "$195k/yr", later
"$172,000 per year"; `almanac.text.stated` says which are of the same thing and the same
value) are one fact: the newest is kept and marked current, the older one said as what it
was ("$172,000 per year (current, 2026-11-03, alice) — was $195k/yr (2026-10-01, bob)").

1. `page_facts` reads the lines the compiler wrote (`[date] author: text`), a recurring
   meeting folded to one line first (`wiki.series`), and finds each key's newest value;
2. offline (`facts_summary`): the fact lines, newest first, as many as fit, then an
   extractive summary of the rest of the page in what is left;
3. with an LLM configured, the `summarize` skill gets the fact lines to keep; its summary
   is used only if it still says every current value with its date and never an older
   value as current (`facts_retained`), else the offline one is.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django_q.tasks import async_task

from almanac.search.text import is_cjk
from almanac.search.tokens import count_tokens
from almanac.text.extractive import extractive_summary
from almanac.text.sentences import split_sentences
from almanac.text.stated import Stated, same_value
from almanac.text.statements import statements
from skills.services import skill_run
from wiki import series
from wiki.models import Page, PageSection, summary_digest

log = logging.getLogger(__name__)

# A line the compiler wrote, maybe behind the container a context item tags it with
# ("[slack #sales] [2026-11-30] alice@acme.com: …").
_ITEM = re.compile(r"^(?:\[[^\]\n]{1,120}\] )?\[(\d{4}-\d{2}-\d{2})\] ([^:\n]{1,300}): ?", re.MULTILINE)
_MARK = re.compile(r"\s*\[(closed|recalled)\]\s*$")
# A fact line shows at most this much of the sentence around its values.
FACT_CHARS = 160
# Words that say a value is not the current one, in a summary ("was $195k/yr").
_PAST = re.compile(
    r"\bwas\b|\bwere\b|\bpreviously\b|\bearlier\b|\bformerly\b|\bold\b|\bno longer\b|\breplac|\bsupersed|"
    r"\bfrom\b|\binstead of\b|此前|之前|原来|原为|原先|曾|已不是|改为|替代",
    re.I,
)


@dataclass
class Said:
    """One value as a line of the page said it."""

    statement: Stated
    date: str
    author: str
    order: tuple  # (date, line number, position in the line): later is newer


@dataclass
class FactLine:
    """A sentence that states at least one current value, and the older values it replaces."""

    date: str
    author: str
    text: str
    order: tuple
    current: list[Said] = field(default_factory=list)
    was: list[Said] = field(default_factory=list)  # the newest older value of each key it replaces
    stale: list[Said] = field(default_factory=list)  # values of this sentence replaced since


def _items(content: str):
    """(date, author, text) of each line the compiler wrote."""
    marks = list(_ITEM.finditer(content or ""))
    for i, match in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else None
        yield match.group(1), match.group(2).strip(), content[match.end() : end].strip()


def _who(author: str) -> str:
    """An author as a fact line names them: the handle of an e-mail address (alice@acme.com → alice)."""
    return author.split("@")[0] if "@" in author and not author.startswith("@") else author


def _clip(sentence: str, said: list[Said]) -> str:
    """The sentence, or the part of it around its values when it is long."""
    sentence = " ".join(sentence.split()).rstrip(";；,，")
    if len(sentence) <= FACT_CHARS:
        return sentence
    at = min((sentence.find(s.statement.shown) for s in said if s.statement.shown in sentence), default=0)
    start = max(0, at - FACT_CHARS // 3)
    return ("…" if start else "") + sentence[start : start + FACT_CHARS].strip() + "…"


def page_facts(contents: list[str]) -> tuple[list[FactLine], list[str]]:
    """(the fact lines of the page, newest first; the page's other lines, as the compiler
    wrote them, for the extractive part). A sentence all of whose values were replaced is
    in neither: it is said only as what a current value replaced."""
    found: list[tuple[str, str, str, tuple, list[Said]]] = []
    rest: list[str] = []
    for number, (date, author, text) in enumerate(item for content in contents for item in _items(content)):
        mark = _MARK.search(text)
        body = _MARK.sub("", text)
        parts = split_sentences(body)
        kept = []
        for position, sentence in enumerate(parts):
            said = [
                Said(
                    s, date, _who(author), (date, number, position, index)
                )  # "from $195k to $172k": the later
                for index, s in enumerate(statements(sentence))
            ]
            if mark and mark.group(1) == "closed" and position == 0:  # an issue's state
                subject = sentence.split(":")[0][:80].lower()
                shown = Stated(attribute=f"status:{subject}", value=frozenset(["closed"]), shown="[closed]")
                said.append(Said(shown, date, _who(author), (date, number, position, len(said))))
            if said:
                found.append(
                    (
                        date,
                        author,
                        sentence + (" [closed]" if mark and position == 0 else ""),
                        (date, number, position),
                        said,
                    )
                )
            else:
                kept.append(sentence)
        if kept:
            rest.append(f"[{date}] {author}: " + " ".join(kept))
    by_key: dict[str, list[Said]] = {}
    for *_, said in found:
        for s in said:
            by_key.setdefault(s.statement.key, []).append(s)
    newest = {key: max(values, key=lambda s: s.order) for key, values in by_key.items()}
    lines = []
    for date, author, sentence, order, said in found:
        current = [s for s in said if newest[s.statement.key] is s]
        if not current:
            continue
        line = FactLine(date, _who(author), _clip(sentence, said), order, current=current)
        line.stale = [
            s
            for s in said
            if newest[s.statement.key] is not s
            and not same_value(newest[s.statement.key].statement.value, s.statement.value)
        ]
        for s in current:
            older = [
                o
                for o in by_key[s.statement.key]
                if not same_value(o.statement.value, s.statement.value) and o.order < s.order
            ]
            if older:
                line.was.append(max(older, key=lambda o: o.order))
        said_was = {(w.statement.key, w.statement.value) for w in line.was}
        line.stale = [s for s in line.stale if (s.statement.key, s.statement.value) not in said_was]
        lines.append(line)
    lines.sort(key=lambda line: line.order, reverse=True)
    return lines, rest


_OWN_BULLET = re.compile(r"^\s*(?:[-*•]\s+)+")


def fact_line_text(line: FactLine, *, zh: bool) -> str:
    """ "- Globex agreed to $172,000 per year (current, 2026-11-03, alice) — was $195k/yr
    (2026-10-01, bob)"; "（当前，…）— 此前：…" in Chinese. The sentence's own list bullet
    ("- pilot starts …" from a note) is not repeated."""
    text = _OWN_BULLET.sub("", line.text)
    if zh:
        head = f"- {text}（{'当前，' if line.was else ''}{line.date}，{line.author}）"
        head += "".join(f"— 此前：{w.statement.shown}（{w.date}，{w.author}）" for w in line.was)
        if line.stale:
            head += "（" + "、".join(s.statement.shown for s in line.stale) + " 已不是当前值）"
        return head
    head = f"- {text} ({'current, ' if line.was else ''}{line.date}, {line.author})"
    head += "".join(f" — was {w.statement.shown} ({w.date}, {w.author})" for w in line.was)
    if line.stale:
        head += f" ({', '.join(s.statement.shown for s in line.stale)} no longer current)"
    return head


def facts_summary(*, title: str, contents: list[str], max_tokens: int, keep: list[str] | None = None) -> str:
    """Offline: the fact lines, newest first, as many as fit; the rest of the page, summarized
    extractively, in what is left (sentences naming a word of `keep` first: the context call
    passes the task's entities)."""
    lines, rest = page_facts(contents)
    zh = is_cjk(title + "".join(line.text for line in lines[:5]))
    out, used = [], 0
    for line in lines:
        text = fact_line_text(line, zh=zh)
        cost = count_tokens(text) + 1
        if used + cost <= max_tokens:
            out.append(text)
            used += cost
    left = max_tokens - used - 1
    if rest and left >= 16:
        extra = extractive_summary("\n".join(rest), left, keep=keep, title=title)
        if extra and count_tokens("\n".join([*out, extra])) <= max_tokens:
            out.append(extra)
    return "\n".join(out)


def _current_values(lines: list[FactLine], summary: str) -> list[Said]:
    """The current values whose fact lines made it into the offline summary (those a
    summary of this length can keep)."""
    return [s for line in lines for s in line.current if _OWN_BULLET.sub("", line.text) in summary]


def facts_retained(summary: str, lines: list[FactLine], *, must: list[Said] | None = None) -> bool:
    """Does `summary` say every current value of `must` (default: all) with its date, and no
    older value it replaced except as what it was ("was", "previously", "此前")?"""
    said = {(s.key, s.value) for sentence in split_sentences(summary) for s in statements(sentence)}
    for s in must if must is not None else [s for line in lines for s in line.current]:
        if (s.statement.key, s.statement.value) not in said and s.statement.shown not in summary:
            return False
        if s.date not in summary:
            return False
    current = {(s.statement.key, s.statement.value) for line in lines for s in line.current}
    for line in lines:
        for old in line.was:
            if (old.statement.key, old.statement.value) in current:
                continue
            for sentence in summary.splitlines():
                if old.statement.shown in sentence and not _PAST.search(
                    sentence.split(old.statement.shown)[0]
                ):
                    return False
    return True


def page_summary_text(
    *,
    tenant,
    title: str,
    contents: list[str],
    max_tokens: int,
    keep: list[str] | None = None,
    trigger: str = "wiki.page",
    log_later: bool = False,
) -> str:
    """The summary of a page made of these section contents (see the module's steps 2–3);
    `keep`: words whose sentences go first (the context call: the task's entities);
    `trigger` and `log_later` go to the LLM's skill run (the context call logs it off the
    request path)."""
    offline = facts_summary(title=title, contents=contents, max_tokens=max_tokens, keep=keep)
    if not settings.LLM_BASE_URL:
        return offline
    lines, _ = page_facts(contents)
    zh = is_cjk(title)
    facts = "\n".join(fact_line_text(line, zh=zh) for line in lines)
    text = "\n\n".join(contents)[:200_000]
    if facts:
        text = (
            "Facts, newest first. Keep each with its date and author; where one is marked current, "
            "say the older value only as what it was:\n" + facts + "\n\nThe page:\n" + text
        )
    keep = [*(keep or []), *(s.statement.shown[:200] for line in lines for s in line.current)][:100]
    try:
        output = skill_run(
            name="summarize",
            input={"text": text, "max_tokens": max_tokens, "title": title, "keep": keep},
            trigger=trigger,
            tenant=tenant,
            log_later=log_later,
        )
    except Exception:
        log.exception("summarizing page %r failed; the offline summary is used", title)
        return offline
    summary = (output.get("summary") or "").strip()
    if summary and facts_retained(summary, lines, must=_current_values(lines, offline)):
        return summary
    log.info("the summary of page %r lost a current fact; the offline summary is used", title)
    return offline


def page_summarize(*, page_id: int) -> bool:
    """Regenerate the summary of a page if its current sections differ from the last one's."""
    page = Page.objects.filter(id=page_id).first()
    if page is None:
        return False
    sections = list(PageSection.objects.filter(page=page, stale=False).order_by("occurred_at", "id"))
    digest = summary_digest(sections)
    if digest == page.summary_digest:
        return False
    summary = ""
    if sections:
        # A recurring meeting is one line here too: its occurrences would crowd out the rest.
        shown = series.series_fold(
            list(PageSection.objects.filter(id__in=[s.pk for s in sections]).order_by("occurred_at", "id")),
            page_title=page.title,
        )
        contents = [s.content for s in sorted(shown, key=lambda s: (s.occurred_at, s.id))]
        try:
            summary = page_summary_text(
                tenant=page.tenant,
                title=page.title,
                contents=contents,
                max_tokens=settings.WIKI_SUMMARY_MAX_TOKENS,
            )
        except Exception:
            log.exception("summarizing page %s failed", page_id)
            return False
    with transaction.atomic():
        page = Page.objects.select_for_update().get(id=page_id)
        current = list(PageSection.objects.filter(page=page, stale=False))
        if summary_digest(current) != digest:
            return False  # sections changed while we summarized; the next task will redo it
        page.summary, page.summary_digest = summary, digest
        page.summary_section_ids = sorted(s.pk for s in sections)
        page._change_reason = "summary regenerated"
        page.save(update_fields=["summary", "summary_digest", "summary_section_ids", "updated_at"])
    return True


def summaries_enqueue(page_ids: set[int]) -> None:
    """After the caller's transaction commits, (re)summarize these pages (one task each)."""
    if not settings.WIKI_SUMMARY_ENABLED:
        return
    for page_id in sorted(page_ids):
        transaction.on_commit(lambda pid=page_id: async_task("wiki.tasks.page_summarize_task", pid))
