"""What compression reads in memories' texts, without the database: the words a topic is
named by (`topic_terms`), the summary that merges one topic's memories into a heading and
one short line per distinct fact (`structured_summary`), and whether a summary still says
every one of them (`covers`).

A summary is only worth writing when it is shorter than what it replaces and says all of
it: `structured_summary` drops lines another line already says (same facts, the same words
within `summary_holds`' share, each number with its role) and factors a leading subject that
several lines share out into a heading; `covers` is the test any summary (an LLM's too)
passes before it replaces anything.
"""

from __future__ import annotations

import functools
import re

from almanac.search.text import CJK, segment, word_spans
from almanac.search.tokens import count_tokens
from almanac.text.facts import CALENDAR_WORDS, codes, number_roles, reordered
from almanac.text.filler import without_reminder
from almanac.text.names import name_tokens, names
from almanac.text.summaries import KEPT_WORDS_SHARE, summary_holds, summary_terms

# Words that name no topic: modal verbs and other words rules of every topic use.
_GENERIC = (
    "需要 必须 应该 可以 已经 所有 每个 没有 不能 不要 需 须 要 会 能 请 进行 使用 "
    "need needs must should shall can will all every each use used using make made get "
    "take also only just please"
)


@functools.cache
def _generic() -> frozenset[str]:
    return frozenset(segment(_GENERIC))


_SPACES = re.compile(r"\s+")
# The most words a shared leading subject has, and the fewest lines that share one.
_MAX_HEADING_CHARS = 24
_MIN_SHARING = 3


def topic_terms(text: str, fact_key: str = "") -> tuple[frozenset[str], frozenset[str]]:
    """(the names `text` mentions, its other content words and key subject words): what a
    topic of memories can be named by. Numbers, dates, single Chinese characters, short
    Latin words and words every topic uses are none."""
    # A name whole ("客户c", "maria lopez": its parts, 客户 and c, name nothing) and the
    # capitalised words of the text.
    found = name_tokens(text) | {" ".join(name.lower().split()) for name in names(text)}
    named = {t for t in found if _topical(t)}
    words = {t for t in segment(text) if _topical(t)} | {w for w in fact_key.split() if _topical(w)}
    return frozenset(named), frozenset(words - named)


def _topical(token: str) -> bool:
    if not token or token in _generic() or token in CALENDAR_WORDS or re.search(r"\d", token):
        return False
    if CJK.search(token):
        return len(token) >= 2
    return len(token) >= 3


def summary_line(text: str) -> str:
    """A memory as one line of a summary: one line, no opener, no closing punctuation."""
    return without_reminder(_SPACES.sub(" ", text))


def says(line: str, other: str) -> bool:
    """Does `line` alone say what `other` says: its facts, its words (`summary_holds`), each
    number with the word it belongs to, its codes, in an order that is not another fact's?"""
    if not summary_holds(other, summary_terms(line)):
        return False
    if not number_roles(other) <= number_roles(line) or not codes(other) <= codes(line):
        return False
    return not reordered(line, other)


_HEADING = re.compile(r"^(?P<head>[^\n]{1,40})[:：]$")


def _lines(text: str) -> list[str]:
    """The lines of a memory, each whole: a summary's lines under a heading ("客户C：",
    "Expense claims:") get their heading back ("客户C合同金额是30万元"), so a summary folded
    into a newer one is merged line by line, not as one long line."""
    out, head = [], ""
    for line in (part.strip() for part in text.splitlines()):
        if not line:
            continue
        match = _HEADING.match(line)
        if match:
            head = match.group("head").strip()
            continue
        if head:
            joiner = "" if CJK.search(head[-1:]) or CJK.search(line[:1]) else " "
            line = head + joiner + line
        out.append(line)
    return out or [text]


def distinct_lines(texts: list[str]) -> list[str]:
    """One line per distinct fact, in the order of `texts`: of lines that say each other the
    shortest stays (the first of equals); a line another one says in full goes."""
    lines = [summary_line(line) for t in texts for line in _lines(t)]
    # `says` needs nine in ten of a line's words in the other: checked first, from sets
    # made once (a topic's lines are compared pairwise).
    words = [set(segment(without_reminder(line))) for line in lines]
    terms = [summary_terms(line).terms for line in lines]

    def might_say(k: int, i: int) -> bool:
        return len(words[i] & terms[k]) >= KEPT_WORDS_SHARE * len(words[i])

    kept: list[int] = []
    for i in sorted(range(len(lines)), key=lambda i: (count_tokens(lines[i]), i)):
        if lines[i] and not any(might_say(k, i) and says(lines[k], lines[i]) for k in kept):
            kept = [k for k in kept if not (might_say(i, k) and says(lines[i], lines[k]))] + [i]
    return [lines[i] for i in sorted(kept)]


def _prefixes(line: str) -> list[str]:
    """The leading parts of `line` that end where a word ends (Latin words, the
    segmenter's Chinese words), up to _MAX_HEADING_CHARS characters, before a word that
    can stand alone (not "款" of 报销款, "的"): longest last."""
    spans = word_spans(line[: _MAX_HEADING_CHARS + 8])
    out = []
    for p in sorted(p for p in spans if 0 < p <= _MAX_HEADING_CHARS):
        head, rest = line[:p], line[p:]
        if head[-1].isalnum() and rest[:1].isalnum() and (head[-1].isascii() or rest[:1].isascii()):
            continue  # inside a Latin word, a number or a name such as 客户C
        if CJK.match(rest) and spans[p] - p < 2:
            continue  # a one-character word leans on the heading
        if rest.lstrip()[:1].isdigit():
            continue  # a number keeps the word it is of ("number 7", "第3条")
        if head.strip() and re.search(r"\w", head) and rest.strip(" ,，:：、-"):
            out.append(head)
    return out


def _factored(line: str, head: str) -> str:
    return line[len(head) :].lstrip(" ,，:：、-")


def _heading(lines: list[str]) -> str:
    """The leading subject most worth writing once: the one that saves the most tokens when
    the lines that open with it lose it (and a heading line says it), if any saves any."""
    heads = {line: _prefixes(line) for line in lines}
    best, saved = "", 0
    for head in sorted({h for found in heads.values() for h in found}):
        sharing = [line for line in lines if head in heads[line]]
        if len(sharing) < _MIN_SHARING:
            continue
        gain = sum(count_tokens(line) - count_tokens(_factored(line, head)) for line in sharing)
        gain -= count_tokens(_title(head)) + 1
        if gain > saved or (gain == saved and gain and len(head) > len(best)):
            best, saved = head, gain
    return best


def _title(head: str) -> str:
    head = head.strip(" ,，:：、-").removesuffix("的")  # 客户C的 → 客户C：
    return head + ("：" if CJK.search(head) else ":")


def structured_summary(texts: list[str]) -> str:
    """The memories of one topic as one short line per distinct fact, the leading subjects
    that several lines share written once each as a heading over them ("报销：", "客户C：",
    "Expense claims:"); lines under no heading come first."""
    rest = distinct_lines(texts)
    blocks: list[str] = []
    while head := _heading(rest):
        under = [line for line in rest if head in _prefixes(line)]
        rest = [line for line in rest if line not in under]
        blocks += [_title(head), *(_factored(line, head) for line in under)]
    return "\n".join([*rest, *blocks])


def tokens_of(texts: list[str]) -> int:
    """What memories cost in a prompt: each one's tokens and the line break between them."""
    return sum(count_tokens(t) for t in texts) + max(len(texts) - 1, 0)


def covers(summary: str, texts: list[str]) -> list[int]:
    """The indexes of `texts` that `summary` does not say: not held (`summary_holds`: their
    facts, names, words and negation) or a number of theirs not attached to the same word
    ("step 5" is not said by "step 1 … day 5"); [] when it says them all."""
    terms, roles = summary_terms(summary), number_roles(summary)
    return [
        i for i, text in enumerate(texts) if not summary_holds(text, terms) or not number_roles(text) <= roles
    ]
