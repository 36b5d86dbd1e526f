"""The one near-duplicate test of texts: does a new text say what an old one says? The same
facts (`same_facts`: numbers attached to the same words, ids, codes, names, dates), the same
words (`same_words`: neither says a word, a period or a relation the other does not), not
reordered, and not the same thing with another value (`almanac.text.stated`, each text's
claim read by `almanac.text.claims`); filler aside (`almanac.text.filler.without_filler`).
Where the candidates come from (vectors, the database) is the caller's business."""

from __future__ import annotations

import functools
import re

from almanac.search.text import CJK, segment
from almanac.text.claims import claim
from almanac.text.facts import codes, fact_signature, number_roles, reordered, unit_facts
from almanac.text.filler import without_filler
from almanac.text.names import name_tokens
from almanac.text.normalize import spelled_numbers
from almanac.text.stated import same_thing, same_value


def says_the_same(new: str, old: str) -> bool:
    """Is `new` a near-duplicate of `old` (both texts as said, already close by meaning)?
    Only when neither says anything the other does not: the same facts, the same words (in
    the same order) and not another value of the same thing. When in doubt it is not: a
    restatement stored twice costs a row, a fact dropped as a duplicate is lost."""
    new, old = without_filler(new), without_filler(old)
    return (
        same_facts(new, old)
        and same_words(new, old)
        and not reordered(new, old)
        and not another_value(new, old)
    )


def another_value(new: str, old: str) -> bool:
    """The same thing with another value ("prefers window seats" / "aisle seats", owner 张三
    / 李四): no duplicate, whatever the vectors say; the newer supersedes the older."""
    first, second = claim(new), claim(old)
    return (
        first is not None
        and second is not None
        and same_thing(first, second)
        and not same_value(first.value, second.value)
    )


def same_facts(first: str, second: str) -> bool:
    """Could `second` say what `first` says, at the level of facts: the same
    `fact_signature`, each number attached to the same word (`number_roles`), the same
    codes, and each one's names (capitalised words) among the other's words. Rewordings,
    reordered clauses, "1,200" / "1200", full-width digits and traditional / simplified
    Chinese still are; another value or role for a number, id, code, name or date is not."""
    if fact_signature(first) != fact_signature(second) or number_roles(first) != number_roles(second):
        return False
    if codes(first) != codes(second):
        return False
    first_names, second_names = _names_beside_amounts(first), _names_beside_amounts(second)
    return first_names <= second_names | set(segment(second)) and second_names <= first_names | set(
        segment(first)
    )


def _names_beside_amounts(text: str) -> set[str]:
    # The "M" of "$3M" is part of an amount, no name.
    return name_tokens(unit_facts(spelled_numbers(text))[1])


# Words that say a fact no differently: said by one text alone they keep nothing apart
# ("Apollo uses Postgres 18" / "Apollo is on Postgres 18", "The budget is now 80k").
_EMPTY_WORDS = (
    "also just really still currently now please use uses happen happens 也 还 就 请 目前 现在 使用 用 采用"
)
# Words one of which says what another of its group does ("likes" / "prefers aisle seats").
_SYNONYMS = ["like likes prefer prefers love loves enjoy enjoys 喜欢 偏好 偏爱 爱 更喜欢"]
# Relations the segmenter drops as stopwords, read from the text: "leaves from the airport"
# is not "leaves to the airport".
_RELATIONS = [
    ("from", re.compile(r"\bfrom\b|从", re.IGNORECASE)),
    ("to", re.compile(r"\b(?:to|into|towards?)\b|向|往", re.IGNORECASE)),
    ("than", re.compile(r"\bthan\b", re.IGNORECASE)),
]
# One-character Chinese words that say a relation; elsewhere a character found inside the
# other text's words counts as said (the segmenter cuts one phrase differently in two sentences).
_RELATION_CHARS = frozenset("前后上下多少内外早晚高低大小长短到至从向往每")


@functools.cache
def _empty_words() -> frozenset[str]:
    return frozenset(segment(_EMPTY_WORDS))


@functools.cache
def _synonym_groups() -> dict[str, int]:
    return {word: index for index, group in enumerate(_SYNONYMS) for word in segment(group)}


def _content_words(text: str) -> tuple[frozenset[str], str]:
    """(the words of `text` that say what it says, the text they were read from): no
    amounts, numbers or words that say nothing; the relations it states."""
    text = unit_facts(spelled_numbers(text))[1]
    words = {
        token
        for token in segment(text)
        if not re.search(r"\d", token) and not re.fullmatch(r"[一二三四五六七八九十百千万两零]+", token)
    }
    words |= {name for name, pattern in _RELATIONS if pattern.search(text)}
    return frozenset(words - _empty_words()), text.lower()


def _said_by(word: str, words: frozenset[str], text: str) -> bool:
    if word in words or (CJK.match(word) and (len(word) > 1 or word not in _RELATION_CHARS) and word in text):
        return True
    group = _synonym_groups().get(word)
    return group is not None and any(_synonym_groups().get(other) == group for other in words)


def same_words(first: str, second: str) -> bool:
    """Does each text say no word the other does not (amounts and words that say nothing
    left out; filler is the caller's to take out)? A period ("per minute" / "per hour",
    每分钟 / 每小时), a relation (before / after, 之前 / 之后, from / to, more than / less
    than, 以上 / 以下, 多于 / 少于) or any content word one text alone has keeps two memories
    apart; case, punctuation and one synonym for another ("likes" / "prefers") do not."""
    (a, a_text), (b, b_text) = _content_words(first), _content_words(second)
    return all(_said_by(w, b, b_text) for w in a - b) and all(_said_by(w, a, a_text) for w in b - a)
