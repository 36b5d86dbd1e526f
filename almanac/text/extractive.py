"""The extractive summary: a text's most telling sentences (names, dates, amounts, ids,
terms) that fit within `max_tokens` (cl100k tokens, as everywhere), in their original
order, without an LLM. The `summarize` and `compress` skills' offline path and the wiki's
page summaries."""

from __future__ import annotations

import functools
import math
import re

from almanac.search.text import CJK
from almanac.search.tokens import count_tokens, count_tokens_by_line, truncate_tokens
from almanac.text.amounts import mentions as amount_mentions
from almanac.text.dates import DATE_TEXT
from almanac.text.names import IDENT
from almanac.text.normalize import content_size, normalize
from almanac.text.sentences import split_sentences

_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+(?:\s+[A-Z][a-zA-Z]+)*\b")
_NUMBER = re.compile(r"\d")
_TERM = re.compile(
    r"《[^》]{1,40}》|「[^」]{1,40}」|“[^”]{1,40}”|\"[^\"]{1,40}\"|`[^`]{1,40}`|\b[A-Z]{2,6}s?\b"
)
_FILLER_START = re.compile(
    r"^(?:hi|hello|hey|dear|thanks?|thank you|ok(?:ay)?|sure|great|got it|bye|regards|cheers|"
    r"best(?: regards| wishes)?|kind regards|warm regards|sincerely|"
    r"你好|您好|大家好|谢谢|感谢|好的|嗯+|收到|再见|此致|祝好)\b",
    re.IGNORECASE,
)
# After a clause mark, not inside a number: "¥297,500", "¥297，500", "15:30", "15：30" stay whole.
_CLAUSE = re.compile(r"(?<=[、；;])|(?<=(?<!\d)[,:，：])|(?<=[,:，：])(?!\d)")


_NAME_TAGS = {
    "nr",
    "ns",
    "nt",
    "nz",
    "nrt",
    "nrfg",
}  # jieba POS: person, place, organisation, other proper noun


def _cjk_names(unit: str) -> int:
    if not CJK.search(unit):
        return 0
    import rjieba  # the segmenter almanac.search uses; its POS tags mark Chinese names

    return sum(1 for word, tag in rjieba.tag(unit) if tag in _NAME_TAGS and len(word) > 1)


# What a wiki page's lines start with: the container ("[slack #sales] ") and the compiler's
# "[2026-11-30] alice@acme.com:". Kept in the summary, never scored: every line has a date
# there, so it would make a greeting look like a dated fact.
_LINE_PREFIX = re.compile(r"^(?:\[[^\]\n]{1,120}\]\s+)?(?P<date>\[\d{4}-\d{2}-\d{2}\])\s+[^:\n]{1,120}:\s*")


@functools.lru_cache(maxsize=20_000)
def _unit_facts(unit: str) -> tuple[float, bool, int, str]:
    """(score from what the sentence says, is it filler, its content size, lower-cased),
    the line's container/date/author prefix left out.

    Cached by text: the same sentences are summarized again for every reader and budget.
    """
    said = _LINE_PREFIX.sub("", unit)
    facts = 3.0 * min(len(DATE_TEXT.findall(said)), 2)
    facts += 3.0 * min(amount_mentions(said), 2)
    facts += 3.0 * min(len(IDENT.findall(said)), 2)
    score = facts + 1.5 * min(len(_CAPITALISED.findall(said)) + _cjk_names(said), 3)
    score += 1.0 * min(len(_TERM.findall(said)), 2)
    score += 0.5 * min(len(_NUMBER.findall(said)), 4)
    size = content_size(said)
    if size < 6 and not facts:
        score *= 0.3  # a fragment ("Location: Zoom", a lone name) says little on its own
    return score, bool(_FILLER_START.match(said)) and size < 12, size, said.lower()


def _score(unit: str, index: int, keep: list[str], tokens: int) -> float:
    """Names, dates, amounts, ids and numbers rank highest; filler lowest (`keep` lower-cased)."""
    facts, filler, size, lower = _unit_facts(unit)
    if filler:
        return -5.0
    score = 4.0 * sum(1 for word in keep if word in lower) + facts
    score += 1.0 if index == 0 else 0.0  # the lead sentence usually says what it is about
    return score / math.sqrt(max(tokens, 1)) * 4 + min(size, 40) / 40


def _telling(keep: list[str], units: list[str]) -> list[str]:
    """The `keep` words (lower-cased) that tell sentences apart: one in most of them (the
    page's own name, "Vercel" on the Vercel page) would favour every sentence alike."""
    lowered = [unit.lower() for unit in units]
    limit = max(2, len(units) // 3)
    return [word for word in keep if sum(word in unit for unit in lowered) <= limit]


def _cut_at_word(unit: str, max_tokens: int) -> str:
    """A prefix within the budget that ends on a word (never half a word or a token)."""
    cut = truncate_tokens(unit, max_tokens)
    if cut == unit:
        return unit
    cut = cut.rstrip("\ufffd")  # half of a multi-byte character at the token edge
    if not CJK.search(cut[-1:]) and " " in cut.strip():
        cut = cut[: cut.rstrip().rfind(" ")]
    return cut.rstrip(" ,，、;；:")


@functools.lru_cache(maxsize=50_000)
def _line_sentences(line: str) -> tuple[tuple[str, int], ...]:
    """(sentence, its tokens) of one line. Cached by text: a page's lines are its sections'
    lines, summarized again for every reader, budget and task."""
    return tuple((sentence, count_tokens(sentence)) for sentence in split_sentences(line))


def _units(text: str, max_tokens: int) -> list[tuple[str, int, int]]:
    """(sentence, its tokens, its line); one longer than the whole budget is split into clauses."""
    out: list[tuple[str, int, int]] = []
    for number, line in enumerate(normalize(text).split("\n")):
        for sentence, tokens in _line_sentences(line):
            if tokens <= max_tokens:
                out.append((sentence, tokens, number))
            else:
                clauses = [c.strip() for c in _CLAUSE.split(sentence) if c.strip()]
                if len(clauses) > 1 and _LINE_PREFIX.fullmatch(clauses[0]):  # the prefix alone
                    clauses[:2] = [f"{clauses[0]} {clauses[1]}"]
                out.extend((c, count_tokens(c), number) for c in clauses)
    return out


def _join(units: list[tuple[str, int]]) -> str:
    """(sentence, line) pairs as text: sentences of one line run on, a new line starts a new
    line (a page's lines are separate messages, events and notes, not one paragraph)."""
    parts: list[str] = []
    previous_line = None
    for unit, line in units:
        if parts and line != previous_line:
            parts.append("\n")
        elif parts and not (CJK.search(parts[-1][-1]) or parts[-1][-1] in "。！？，；：”」）"):
            parts.append(" ")
        parts.append(unit)
        previous_line = line
    return "".join(parts)


def _dated(chosen: list[int], units, lines, first, dates) -> list[tuple[str, int]]:
    """(unit, line) pairs to join; the first unit taken from a line, when it is not where the
    line starts, is prefixed with the line's date."""
    out, lines_done = [], set()
    for i in chosen:
        line, unit = lines[i], units[i]
        if line not in lines_done and i != first[line] and line in dates:
            unit = f"{dates[line]} {unit}"
        lines_done.add(line)
        out.append((unit, line))
    return out


def extractive_summary(
    text: str, max_tokens: int, keep: list[str] | None = None, title: str | None = None
) -> str:
    """Deterministic: score sentences, keep the best that fit, in their original order."""
    normalized = re.sub(r"\n\s*\n+", "\n", normalize(text)).strip()
    if count_tokens_by_line(normalized) <= max_tokens:  # the same count, from per-line memos
        return normalized
    keep = [w for w in (keep or []) if w] + ([title] if title else [])
    measured = _units(normalized, max_tokens)
    if not measured:
        return ""
    units = [unit for unit, _, _ in measured]
    sizes = [tokens for _, tokens, _ in measured]
    lines = [line for _, _, line in measured]
    # A sentence or clause taken from the middle of a line keeps the line's date ("[2026-11-30]
    # 首年费用为¥297,500元"): its cost counts it, the join writes it once per line.
    first: dict[int, int] = {}
    for i, line in enumerate(lines):
        first.setdefault(line, i)
    dates = {line: m["date"] for line, i in first.items() if (m := _LINE_PREFIX.match(units[i]))}
    for i, line in enumerate(lines):
        if i != first[line] and line in dates:
            sizes[i] += count_tokens(dates[line] + " ")
    keep_lower = _telling([word.lower() for word in keep], units)
    scores = [_score(unit, i, keep_lower, sizes[i]) for i, unit in enumerate(units)]
    # Filler (greetings, thanks) is only a last resort.
    ranked = sorted(range(len(units)), key=lambda i: (scores[i] <= 0, -scores[i], i))
    chosen: set[int] = set()
    used = 0
    # Room left over is not filled with what says next to nothing ("Alice", "Location:
    # Zoom"): a sentence worth under a quarter of the best is left out once something is in.
    floor = 0.25 * scores[ranked[0]] if scores[ranked[0]] > 0 else float("-inf")
    for i in ranked:
        cost = sizes[i] + 1
        if chosen and scores[i] < floor:
            break
        if used + cost <= max_tokens and (scores[i] > 0 or not any(scores[j] > 0 for j in chosen)):
            chosen.add(i)
            used += cost
    if ranked[0] not in chosen and sum(scores[i] for i in chosen) < scores[ranked[0]]:
        # The best sentence alone is worth more than everything that fits: keep its start.
        return _cut_at_word(units[ranked[0]], max_tokens)
    summary = _join(_dated(sorted(chosen), units, lines, first, dates))
    # Token counts are not exactly additive across joins: drop the weakest until it fits.
    # Measured by line (the same number): a summary line is often a whole line of the
    # text, already in the memo, while the summary as a whole is new for every reader.
    for i in reversed(ranked):
        if count_tokens_by_line(summary) <= max_tokens:
            break
        if i in chosen and len(chosen) > 1:
            chosen.discard(i)
            summary = _join(_dated(sorted(chosen), units, lines, first, dates))
    return summary if count_tokens_by_line(summary) <= max_tokens else _cut_at_word(summary, max_tokens)
