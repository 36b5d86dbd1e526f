"""Page summaries that keep the newest facts, one per set of sections a reader sees.

A reader's summary is made from the page's sections they may see, and nothing else
(`page_summary_for_reader`): it is stored per set of sections (`wiki.models.PageSummary`,
keyed by `summary_key`: the sections' ids, versions and readers), so readers who see the
same sections share one, and a reader who sees one section more or fewer never gets
another's. A set read for the first time is summarized on the request, offline; with an
LLM configured `page_summarize` rewrites it off the request path, and it drops the stored
summaries whose sections changed.

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

import functools
import logging
import math
import re
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from almanac.queue import enqueue_once
from almanac.search.text import is_cjk, segment
from almanac.search.tokens import count_tokens
from almanac.text.extractive import extractive_summary
from almanac.text.sentences import split_sentences
from almanac.text.stated import Stated, same_value
from almanac.text.statements import statements
from skills.services import skill_run
from wiki import series
from wiki.models import Page, PageSection, PageSummary, summary_key

log = logging.getLogger(__name__)

# A line the compiler wrote, maybe behind the container a context item tags it with
# ("[slack #sales] [2026-11-30] alice@acme.com: …").
_ITEM = re.compile(r"^(?:\[([^\]\n]{1,120})\] )?\[(\d{4}-\d{2}-\d{2})\] ([^:\n]{1,300}): ?", re.MULTILINE)
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
    where: str = ""  # the container its line came from, when the text names it

    def source(self) -> tuple[str, str, str]:
        return (self.date, self.author, self.where)


@dataclass
class FactLine:
    """A sentence that states at least one current value, and the older values it replaces."""

    date: str
    author: str
    text: str
    order: tuple
    current: list[Said] = field(default_factory=list)
    was: list[Said] = field(default_factory=list)  # the newest older value of each key it replaces
    # the other sources that said all its current values (newest first, `_also`): one fact
    # told in Slack and by e-mail is printed once, with both sources
    also: list[Said] = field(default_factory=list)
    where: str = ""  # the container its line came from, when the text names it
    stale: list[Said] = field(default_factory=list)  # values of this sentence replaced since


def _items(content: str):
    """(date, author, text, container) of each line the compiler wrote: the container a
    context item tagged its section with (`[slack #sales] [2026-11-30] …`) holds for the
    section's later lines too ("" when untagged)."""
    marks = list(_ITEM.finditer(content or ""))
    container = ""
    for i, match in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else None
        container = match.group(1) or container
        yield match.group(2), match.group(3).strip(), content[match.end() : end].strip(), container


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


def _clauses_joined(sentences: list[str]) -> list[str]:
    """A sentence cut at a semicolon is read with what follows it: "Acme pushed back on the
    renewal; we are now at $131/seat." states the renewal's price, not a new quote's."""
    out: list[str] = []
    for sentence in sentences:
        if out and out[-1].rstrip().endswith((";", "；")):
            out[-1] = f"{out[-1].rstrip()} {sentence.strip()}"
        else:
            out.append(sentence)
    return out


def page_facts(contents: list[str]) -> tuple[list[FactLine], list[str]]:
    """(the fact lines of the page, newest first; the page's other lines, as the compiler
    wrote them, for the extractive part). A sentence all of whose values were replaced is
    in neither: it is said only as what a current value replaced."""
    found: list[tuple[str, str, str, tuple, list[Said]]] = []
    rest: list[str] = []
    for number, (date, author, text, where) in enumerate(
        item for content in contents for item in _items(content)
    ):
        mark = _MARK.search(text)
        body = _MARK.sub("", text)
        parts = _clauses_joined(split_sentences(body))
        kept = []
        for position, sentence in enumerate(parts):
            said = [
                Said(s, date, _who(author), (date, number, position, index), where)
                for index, s in enumerate(statements(sentence))  # "from $195k to $172k": the later
            ]
            if mark and mark.group(1) == "closed" and position == 0:  # an issue's state
                subject = sentence.split(":")[0][:80].lower()
                shown = Stated(attribute=f"status:{subject}", value=frozenset(["closed"]), shown="[closed]")
                said.append(Said(shown, date, _who(author), (date, number, position, len(said)), where))
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
    # the sentences that are fact lines of their own (they hold a current value)
    printed = {order for *_, order, said in found if any(newest[s.statement.key] is s for s in said)}
    lines = []
    for date, author, sentence, order, said in found:
        current = [s for s in said if newest[s.statement.key] is s]
        if not current:
            continue
        line = FactLine(
            date, _who(author), _clip(sentence, said), order, current=current, where=said[0].where
        )
        line.also = _also(line, by_key, printed)
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


# A fact line names at most this many other sources of its values.
ALSO_MAX = 2


def _also(line: FactLine, by_key: dict[str, list[Said]], printed: set[tuple]) -> list[Said]:
    """The other sources, newest first, that said the current values of `line` as they are
    since they last changed: the price agreed in #deal-desk and confirmed by e-mail. A
    sentence counts only if it said every one of them (a reply that names the two-year term
    but not the new price is no source of "two-year term at $107/seat"). Each source (date,
    author, container) once, never the line's own, and never a sentence that is a fact line
    of its own (`printed`): it shows with its source already."""
    own = (line.date, line.author, line.where)
    # another sentence (its line and place): the current values it said too, by their index
    held: dict[tuple, dict[int, Said]] = {}
    for index, s in enumerate(line.current):
        values = by_key[s.statement.key]
        # a value said before another one replaced it is of an earlier time: not a source of this
        since = max(
            (o.order for o in values if not same_value(o.statement.value, s.statement.value)), default=()
        )
        for other in values:
            if (
                other.order > since
                and other.order[:3] != s.order[:3]
                and other.order[:3] not in printed
                and same_value(other.statement.value, s.statement.value)
            ):
                held.setdefault(other.order[:3], {}).setdefault(index, other)
    found: dict[tuple, Said] = {}
    for said in held.values():
        first = next(iter(said.values()))
        if len(said) == len(line.current) and first.source() != own:
            found.setdefault(first.source(), first)
    return sorted(found.values(), key=lambda o: o.order, reverse=True)[:ALSO_MAX]


def _source_text(said_date: str, author: str, where: str, *, named: bool, zh: bool) -> str:
    parts = [said_date, author, where] if named and where else [said_date, author]
    return ("，" if zh else ", ").join(parts)


_OWN_BULLET = re.compile(r"^\s*(?:[-*•]\s+)+")


def fact_line_text(line: FactLine, *, zh: bool) -> str:
    """ "- Globex agreed to $172,000 per year (current, 2026-11-03, alice) — was $195k/yr
    (2026-10-01, bob)"; "（当前，…）— 此前：…" in Chinese. The sentence's own list bullet
    ("- pilot starts …" from a note) is not repeated."""
    text = _OWN_BULLET.sub("", line.text)
    # Sources named with their container only when another source said it too.
    named = bool(line.also) and len({line.where, *(o.where for o in line.also)}) > 1
    source = _source_text(line.date, line.author, line.where, named=named, zh=zh)
    others = [_source_text(o.date, o.author, o.where, named=named, zh=zh) for o in line.also]
    if zh:
        also = "".join(f"；另见 {o}" for o in others)
        head = f"- {text}（{'当前，' if line.was else ''}{source}{also}）"
        head += "".join(f"— 此前：{w.statement.shown}（{w.date}，{w.author}）" for w in line.was)
        if line.stale:
            head += "（" + "、".join(s.statement.shown for s in line.stale) + " 已不是当前值）"
        return head
    also = "".join(f"; also {o}" for o in others)
    head = f"- {text} ({'current, ' if line.was else ''}{source}{also})"
    head += "".join(f" — was {w.statement.shown} ({w.date}, {w.author})" for w in line.was)
    if line.stale:
        head += f" ({', '.join(s.statement.shown for s in line.stale)} no longer current)"
    return head


def facts_summary(
    *, title: str, contents: list[str], max_tokens: int, keep: list[str] | None = None, task: str = ""
) -> str:
    """Offline: the fact lines, newest first, as many as fit; the rest of the page, summarized
    extractively, in what is left (sentences naming a word of `keep` first: the context call
    passes the task's entities). With a `task` (the context call), the fact lines that share
    its telling words go first (`by_task`), and the rest is read for them too."""
    lines, rest = page_facts(contents)
    zh = is_cjk(title + "".join(line.text for line in lines[:5]))
    words = task_words(task)
    if words:
        answering, rest = task_sentences(rest, words, named=[title, *(keep or [])])
        lines = by_task(sorted(lines + answering, key=lambda line: line.order, reverse=True), words)
        keep = [*(keep or []), *words]
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


@functools.lru_cache(maxsize=20_000)
def _words(text: str) -> frozenset[str]:
    return frozenset(segment(text))


def task_words(task: str) -> list[str]:
    """The task's search terms (`almanac.search.text.segment`: stemmed, no stop words)."""
    return sorted(_words(task)) if task else []


def task_sentences(
    rest: list[str], words: list[str], *, named: list[str]
) -> tuple[list[FactLine], list[str]]:
    """(the sentences of the page's other lines that hold a telling word of the task, as fact
    lines with no value: "Kickoff: scope, and the Databricks integration" answers "which
    system do we integrate with" without a typed value; the other lines without them). The
    words of `named` (the page's title, the task's entities) tell nothing here: every line
    of the page is about them."""
    telling = set(words) - {word for name in named for word in _words(name)}
    found: list[FactLine] = []
    others: list[str] = []
    for number, (date, author, text, _) in enumerate(item for line in rest for item in _items(line)):
        kept = []
        for position, sentence in enumerate(split_sentences(text)):
            if _words(sentence) & telling:
                found.append(FactLine(date, _who(author), _clip(sentence, []), (date, number, position)))
            else:
                kept.append(sentence)
        if kept:
            others.append(f"[{date}] {author}: " + " ".join(kept))
    found.sort(key=lambda line: line.order, reverse=True)
    return found, others


def by_task(lines: list[FactLine], words: list[str]) -> list[FactLine]:
    """The fact lines, those holding more of the task's telling words first (each word
    weighed by how few of the page's lines hold it: the page's own name tells nothing);
    newest first among equals."""
    held = [_words(line.text) & set(words) for line in lines]
    count = {word: sum(word in h for h in held) for word in words}
    total = len(lines)

    def score(index: int) -> float:
        return sum(math.log(1 + total / count[word]) for word in held[index] if count[word] < total)

    order = sorted(range(total), key=lambda i: -score(i))  # stable: newest first among equals
    return [lines[i] for i in order]


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
    task: str = "",
) -> str:
    """The summary of a page made of these section contents (see the module's steps 2–3);
    `keep`: words whose sentences go first (the context call: the task's entities); `task`:
    the context call's task, whose fact lines go first (`by_task`);
    `trigger` and `log_later` go to the LLM's skill run (the context call logs it off the
    request path)."""
    return _summary_made(
        tenant=tenant,
        title=title,
        contents=contents,
        max_tokens=max_tokens,
        keep=keep,
        trigger=trigger,
        log_later=log_later,
        task=task,
    )[0]


def _summary_made(
    *, tenant, title, contents, max_tokens, keep=None, trigger="wiki.page", log_later=False, task=""
):
    """(`page_summary_text`, the method that made it: "llm" or "offline")."""
    offline = facts_summary(title=title, contents=contents, max_tokens=max_tokens, keep=keep, task=task)
    if not settings.LLM_BASE_URL:
        return offline, PageSummary.Method.OFFLINE
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
        return offline, PageSummary.Method.OFFLINE
    summary = (output.get("summary") or "").strip()
    if summary and facts_retained(summary, lines, must=_current_values(lines, offline)):
        # The skill's offline path may have stood in for a failing LLM: its method, not "llm".
        return summary, PageSummary.Method.LLM if output.used_llm else PageSummary.Method.OFFLINE
    log.info("the summary of page %r lost a current fact; the offline summary is used", title)
    return offline, PageSummary.Method.OFFLINE


# --- stored per set of sections a reader sees -------------------------------------------------

# What `summary_key` reads of a section.
_KEY_FIELDS = ("id", "content_digest", "updated_at", "acl")
# What a summary reads of a section (its text, and what `series.series_fold` reads).
_FOLD_FIELDS = (
    "id",
    "page_id",
    "thread_key",
    "container_key",
    "title",
    "content",
    "occurred_at",
    "source_list",
)
# Stored summaries kept per page (one per set of sections some reader saw; the newest).
SETS_PER_PAGE = 64


def page_summary_for_reader(*, user, page: Page) -> str:
    """The summary of the page's sections this reader may see (non-stale): the stored one
    of exactly that set (`summary_key`), else made now offline (`facts_summary`) and stored
    for every reader of that set. "" when they see none, or summaries are off. With an LLM
    configured, a summary made here is rewritten by the LLM off the request path."""
    if not settings.WIKI_SUMMARY_ENABLED:
        return ""
    sections = list(
        PageSection.objects.visible_to(user).filter(page=page).values_list(*_KEY_FIELDS, named=True)
    )
    if not sections:
        return ""
    key = summary_key(sections)
    stored = PageSummary.objects.filter(page=page, sections_key=key).values_list("summary", flat=True).first()
    if stored is not None:
        return stored
    ids = sorted(s.id for s in sections)
    summary, method = _set_summary(page, ids, llm=False)
    PageSummary.objects.bulk_create(
        [
            PageSummary(
                page=page,
                sections_key=key,
                section_ids=ids,
                summary=summary,
                method=method,
            )
        ],
        ignore_conflicts=True,  # another reader of the same set made it meanwhile: the same text
    )
    if settings.LLM_BASE_URL:
        summaries_enqueue({page.pk})
    return summary


def _set_summary(page: Page, section_ids: list[int], *, llm: bool) -> tuple[str, str]:
    """(summary, method) of these sections of the page, a recurring meeting folded to one line
    first (its occurrences would crowd out the rest); offline unless `llm`."""
    rows = list(
        PageSection.objects.filter(page=page, id__in=section_ids)
        .only(*_FOLD_FIELDS)
        .order_by("occurred_at", "id")
    )
    shown = series.series_fold(rows, page_title=page.title)
    contents = [s.content for s in sorted(shown, key=lambda s: (s.occurred_at, s.id))]
    if not llm:
        text = facts_summary(title=page.title, contents=contents, max_tokens=settings.WIKI_SUMMARY_MAX_TOKENS)
        return text, PageSummary.Method.OFFLINE
    return _summary_made(
        tenant=page.tenant, title=page.title, contents=contents, max_tokens=settings.WIKI_SUMMARY_MAX_TOKENS
    )


def page_summarize(*, page_id: int) -> bool:
    """After a page's sections changed: drop its stored summaries whose sections changed
    (text, readers) or went away, keep at most `WIKI_SUMMARY_SETS_PER_PAGE` (the newest), and
    with an LLM configured rewrite the offline ones still current. True if any changed."""
    page = Page.objects.filter(id=page_id).select_related("tenant").first()
    if page is None:
        return False
    current = {
        s.id: s
        for s in PageSection.objects.filter(page=page, stale=False).values_list(*_KEY_FIELDS, named=True)
    }
    gone, offline = [], []
    for row in PageSummary.objects.filter(page=page).only("id", "sections_key", "section_ids", "method"):
        sections = [current.get(sid) for sid in row.section_ids]
        if (
            None in sections
            or summary_key(sections) != row.sections_key
            or not _seen_alone(sections, current)
        ):
            gone.append(row.pk)
        elif row.method == PageSummary.Method.OFFLINE:
            offline.append(row)
    keep = PageSummary.objects.filter(page=page).exclude(id__in=gone).order_by("-created_at", "-id")
    gone += list(keep.values_list("id", flat=True)[SETS_PER_PAGE:])
    deleted = PageSummary.objects.filter(id__in=gone).delete()[0] if gone else 0
    rewritten = 0
    if settings.LLM_BASE_URL:
        for row in offline:
            if row.pk in gone:
                continue
            summary, method = _set_summary(page, row.section_ids, llm=True)
            if method == PageSummary.Method.LLM:
                # Only while its sections are still as summarized (key and all).
                rewritten += PageSummary.objects.filter(pk=row.pk, sections_key=row.sections_key).update(
                    summary=summary, method=method
                )
    return bool(deleted or rewritten)


def _seen_alone(sections: list, current: dict) -> bool:
    """Can a reader still see exactly these sections of the page? Not when another section's
    readers include all the readers of one of them (its ACL holds all of that one's keys): a
    reader of that one sees it too."""
    inside = {frozenset(s.acl) for s in sections}
    ids = {s.id for s in sections}
    outside = {frozenset(s.acl) for pk, s in current.items() if pk not in ids}
    return not any(acl >= other for acl in outside for other in inside)


def summaries_enqueue(page_ids: set[int]) -> None:
    """After the caller's transaction commits, (re)summarize these pages (one task each)."""
    if not settings.WIKI_SUMMARY_ENABLED:
        return
    for page_id in sorted(page_ids):
        transaction.on_commit(lambda pid=page_id: enqueue_once("wiki.tasks.page_summarize_task", pid))
