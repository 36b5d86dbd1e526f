"""The budget fitter: a hard ceiling on the prompt's real token count.

`max_tokens` bounds `count_tokens(prompt)` of the final string (labels, separators and
newlines included). Each block has a share of the budget; a block that needs less than
its share leaves the rest to the others (spill-over), earlier blocks first. Wiki pages
that exceed their part are summarized (the `summarize` callback); list items that do not
fit are left out. Everything summarized or left out is returned so the caller can say so.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from almanac.search.tokens import count_tokens, count_tokens_by_line
from context.constants import BLOCK_KINDS
from context.items import Fit, Item
from context.prompt import BLOCK_SEPARATOR, LABELS, assemble, render_block, render_item, wiki_header

# Everything is measured by line: the same number as measuring the whole text, from
# per-line memos (a page's rendering is new for every reader, its lines are not).

# summarize(item, target_tokens) -> summary text of at most target_tokens, or None on failure.
Summarizer = Callable[[Item, int], str | None]


@functools.lru_cache(maxsize=8)
def block_shares(raw: str) -> dict[str, float]:
    """`CONTEXT_BLOCK_SHARES` ("wiki:0.5,semantic:0.2,…") as shares that sum to 1."""
    shares: dict[str, float] = {}
    for part in raw.split(","):
        if not part.strip():
            continue
        kind, _, value = part.partition(":")
        kind = kind.strip()
        if kind not in BLOCK_KINDS:
            raise ImproperlyConfigured(f"CONTEXT_BLOCK_SHARES: unknown block {kind!r}")
        try:
            shares[kind] = float(value)
        except ValueError as exc:
            raise ImproperlyConfigured(f"CONTEXT_BLOCK_SHARES: bad share for {kind!r}") from exc
    total = sum(shares.values())
    if total <= 0 or any(v < 0 for v in shares.values()):
        raise ImproperlyConfigured("CONTEXT_BLOCK_SHARES must be non-negative and not all zero")
    return {kind: shares.get(kind, 0.0) / total for kind in BLOCK_KINDS}


def fit(
    candidates: dict[str, list[Item]],
    *,
    max_tokens: int,
    lang: str,
    summarize: Summarizer,
    shares: dict[str, float] | None = None,
) -> Fit:
    """Choose, summarize and order items so that count_tokens(prompt) <= max_tokens.

    1. Each present block is guaranteed min(its demand, its share of the budget).
    2. Blocks are filled in priority order (wiki, semantic, episodic, working); a block
       may use whatever the later blocks' guarantees leave, and what it leaves unused
       flows on to the later blocks.
    3. The final string is measured; if separators pushed it over, the lowest-priority
       item goes (reported like any other left-out item).
    """
    shares = shares or block_shares(settings.CONTEXT_BLOCK_SHARES)
    kinds = [k for k in BLOCK_KINDS if candidates.get(k)]
    separator = count_tokens_by_line(BLOCK_SEPARATOR)
    available = max_tokens - separator * max(0, len(kinds) - 1)
    demand = {k: count_tokens_by_line(render_block(k, candidates[k], lang)) for k in kinds}
    guaranteed = {k: min(demand[k], int(shares.get(k, 0.0) * available)) for k in kinds}

    result = Fit(prompt="", used=0, chosen={}, block_tokens={})
    remaining = available
    for index, kind in enumerate(kinds):
        reserve = sum(guaranteed[k] for k in kinds[index + 1 :])
        allowance = min(demand[kind], max(0, remaining - reserve))
        chosen, left_out, summarized = _fill(kind, candidates[kind], allowance, lang, summarize)
        result.chosen[kind] = chosen
        result.left_out.extend(left_out)
        result.summarized.extend(summarized)
        remaining -= count_tokens_by_line(render_block(kind, chosen, lang))
    _enforce_ceiling(result, max_tokens, lang)
    return result


def _fill(kind, items, allowance, lang, summarize):
    if kind == "wiki":
        return _fill_pages(items, allowance, lang, summarize)
    if kind == "working":
        chosen, left_out = _fill_recent(items, allowance, lang)
        return chosen, left_out, []
    chosen, left_out = _fill_ranked(kind, items, allowance, lang)
    return chosen, left_out, []


def _fits(kind: str, items: list[Item], allowance: int, lang: str) -> bool:
    return count_tokens_by_line(render_block(kind, items, lang)) <= allowance


class _ListCost:
    """Tokens of a one-line-per-item block (memories, turns) as a sum over its items.

    A block is its label line, then one line per item; counting by line makes its tokens
    the label's, plus each item's line with its newline, except the last item's without.
    Items never start with whitespace, so no line merges with the one before (the final
    prompt is measured as a whole anyway). Measuring each item once replaces rendering and
    measuring the whole block again for every item tried (quadratic in the list).
    """

    def __init__(self, kind: str, lang: str):
        self.lang = lang
        self.label = count_tokens(LABELS[lang][kind] + "\n")
        self._costs: dict[int, tuple[int, int]] = {}

    def item(self, item: Item) -> tuple[int, int]:
        """(tokens as a middle line, tokens as the last line)."""
        cost = self._costs.get(id(item))
        if cost is None:
            line = render_item(item, self.lang)
            cost = self._costs[id(item)] = (count_tokens(line + "\n"), count_tokens(line))
        return cost


def _fill_ranked(kind: str, items: list[Item], allowance: int, lang: str):
    """Memories in rank order; one that does not fit is skipped, smaller ones may follow."""
    cost = _ListCost(kind, lang)
    chosen: list[Item] = []
    left_out: list[Item] = []
    middle = cost.label  # the chosen items, each followed by a newline
    for item in items:
        as_middle, as_last = cost.item(item)
        if middle + as_last <= allowance:
            chosen.append(item)
            middle += as_middle
        else:
            left_out.append(item)
    return chosen, left_out


def _fill_recent(items: list[Item], allowance: int, lang: str):
    """The working window keeps its newest turns, contiguous, in conversation order."""
    cost = _ListCost("working", lang)
    total = cost.label
    for position in range(len(items) - 1, -1, -1):
        as_middle, as_last = cost.item(items[position])
        # The newest turn is the block's last line; each older one goes before it.
        grown = total + (as_last if position == len(items) - 1 else as_middle)
        if grown > allowance:
            return items[position + 1 :], items[: position + 1]
        total = grown
    return list(items), []


def water_fill(sizes: list[int], capacity: int, weights: list[float] | None = None) -> list[int]:
    """Split `capacity` so small items get all they need and large ones share the rest in
    proportion to their weights (equally without)."""
    weights = weights or [1.0] * len(sizes)
    gives = [0] * len(sizes)
    left = max(0, capacity)
    # Those that need least for their weight first: what they leave goes to the others.
    order = sorted(range(len(sizes)), key=lambda i: sizes[i] / weights[i])
    for rank, i in enumerate(order):
        fair = int(left * weights[i] / sum(weights[j] for j in order[rank:]))
        gives[i] = min(sizes[i], fair)
        left -= gives[i]
    return gives


def _page_plan(pages: list[Item], allowance: int, lang: str):
    """Drop the lowest-ranked pages until every page that must shrink can keep a useful summary.

    Returns (pages kept, summary target per page or None when it fits whole, dropped pages).
    """
    active = list(pages)
    dropped: list[Item] = []
    while active:
        sizes = [count_tokens_by_line(render_item(page, lang)) for page in active]
        whole = count_tokens_by_line(render_block("wiki", active, lang))
        if whole <= allowance:
            return active, [None] * len(active), dropped
        # Label and joins, measured; one token of slack per page for joins that merge differently.
        overhead = max(0, whole - sum(sizes)) + len(active)
        weights = [settings.CONTEXT_ENTITY_PAGE_WEIGHT if page.about_task else 1.0 for page in active]
        gives = water_fill(sizes, allowance - overhead, weights)
        targets = [
            None if give >= size else give - count_tokens_by_line(wiki_header(page, lang, compact=True)) - 1
            for page, size, give in zip(active, sizes, gives, strict=True)
        ]
        if all(t is None or t >= settings.CONTEXT_MIN_SUMMARY_TOKENS for t in targets):
            return active, targets, dropped
        dropped.insert(0, active.pop())
    return [], [], dropped


def _summarized(page: Item, text: str) -> Item:
    short = dataclasses.replace(page, text=text, summarized=True)
    short.__dict__["source_labels"] = page.source_labels  # same sources: keep the computed labels
    return short


def _fill_pages(pages: list[Item], allowance: int, lang: str, summarize: Summarizer):
    active, targets, left_out = _page_plan(pages, allowance, lang)
    chosen: list[Item] = []
    asked: dict[str, tuple[Item, int]] = {}  # page id: (the page, its summary's target)
    for page, target in zip(active, targets, strict=True):
        if target is None:
            chosen.append(page)
            continue
        text = summarize(page, target)
        if not text:
            left_out.append(page)
            continue
        chosen.append(_summarized(page, text))
        asked[page.id] = (page, target)
    chosen = _spend_freed(print_once(chosen), asked, allowance, lang, summarize)
    summarized = [page for page in chosen if page.summarized]  # print_once may have shortened them
    # Joining can cost a token or two more than the parts; shrink from the bottom if so.
    while chosen and not _fits("wiki", chosen, allowance, lang):
        gone = chosen.pop()
        left_out.append(gone)
        if gone in summarized:
            summarized.remove(gone)
    left_out.sort(key=lambda p: pages.index(p) if p in pages else len(pages))
    return chosen, left_out, summarized


def _spend_freed(
    chosen: list[Item], asked: dict, allowance: int, lang: str, summarize: Summarizer
) -> list[Item]:
    """What `print_once` freed (lines a page above printed, a summary all of whose lines
    were) goes to the best-ranked summarized page: summarized again, that much longer."""
    first = next((i for i, page in enumerate(chosen) if page.summarized and page.id in asked), None)
    if first is None:
        return chosen
    freed = allowance - count_tokens_by_line(render_block("wiki", chosen, lang)) - len(chosen)
    if freed < settings.CONTEXT_MIN_SUMMARY_TOKENS:
        return chosen
    page, target = asked[chosen[first].id]
    text = summarize(page, target + freed)
    if not text:
        return chosen
    longer = print_once([*chosen[:first], _summarized(page, text), *chosen[first + 1 :]])
    return longer if _fits("wiki", longer, allowance, lang) else chosen


def print_once(pages: list[Item]) -> list[Item]:
    """Each thread once: the compiler writes a thread's section on every page it names, and a
    page keeps only the sections no page above it printed (whole, or kept by its summary).
    Which copy stays is only known now: a summary may have dropped the thread, and then a
    lower page keeps its copy. A summary's line saying what a page above already printed
    (the same fact line from a thread both pages hold) goes too; when the task names or
    describes an entity, a summary that says nothing else goes whole, unless it is of such
    an entity's page (a task about no one entity keeps it: its title may name a candidate).
    Only removes text, so what fitted still fits; a page left with no
    section of its own goes."""
    said: set[str] = set()
    printed: list[str] = []
    out = []
    subject = any(page.about_task for page in pages)
    for page in pages:
        if page.summarized or not page.parts:
            if page.summarized and printed:
                before = "\n".join(printed)
                lines = page.text.splitlines()
                kept = [line for line in lines if not _said_in(line, before)]
                if any(line.strip() for line in kept):
                    page = dataclasses.replace(page, text="\n".join(kept)) if len(kept) < len(lines) else page
                elif subject and not page.about_task:
                    continue  # a summary saying nothing new goes, its budget freed (`_spend_freed`)
            said.update(key for key, text in page.parts if key and text in page.text)
            printed.append(page.text)
            out.append(page)
            continue
        parts = [(key, text) for key, text in page.parts if key is None or key not in said]
        said.update(key for key, _ in page.parts if key)
        if not parts:
            continue
        if len(parts) < len(page.parts):
            page = dataclasses.replace(page, text="\n".join(text for _, text in parts), parts=parts)
        printed.append(page.text)
        out.append(page)
    return out


# A summary's line without its bullet and its "(date, author)" attribution.
_BULLET = re.compile(r"^\s*[-•*]\s*")
_ATTRIBUTION = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")
# Shorter than this, a line is no evidence that the same thing was printed ("- Done.").
_SAID_MIN_CHARS = 16


def _said_in(line: str, before: str) -> bool:
    """Was this line said above: its text, or a short one with the same date and author
    ("- 试点期 88天。（2026-10-15，huangyan）": the same line of the same source)?"""
    bare = _BULLET.sub("", line).strip()
    core = _ATTRIBUTION.sub("", bare).strip()
    if len(core) >= _SAID_MIN_CHARS:
        return core in before
    return bool(core) and bare != core and bare in before


def _enforce_ceiling(result: Fit, max_tokens: int, lang: str) -> None:
    while True:
        blocks = [render_block(k, result.chosen.get(k, []), lang) for k in BLOCK_KINDS]
        result.prompt = assemble(blocks)
        # By line is the whole text's count (cl100k never joins a newline run to the next
        # line; tests/almanac/test_search.py checks it), from the per-line memos.
        result.used = count_tokens_by_line(result.prompt)
        if result.used <= max_tokens:
            break
        kind = next(k for k in reversed(BLOCK_KINDS) if result.chosen.get(k))
        # The working window loses its oldest turn; other blocks their lowest-ranked item.
        gone = result.chosen[kind].pop(0 if kind == "working" else -1)
        result.left_out.append(gone)
        if gone in result.summarized:
            result.summarized.remove(gone)
    result.block_tokens = {
        k: count_tokens_by_line(render_block(k, items, lang)) for k, items in result.chosen.items() if items
    }
    result.chosen = {k: items for k, items in result.chosen.items() if items}
