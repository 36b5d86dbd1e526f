"""The one near-duplicate test of texts: does a new text say what an old one says? The same
facts (`same_facts`: numbers attached to the same words, ids, codes, names, dates), not the
same words reordered, and not the same thing with another value (`almanac.text.stated`,
each text's claim read by `almanac.text.claims`).
Where the candidates come from (vectors, the database) is the caller's business."""

from __future__ import annotations

from almanac.search.text import segment
from almanac.text.claims import claim
from almanac.text.facts import codes, fact_signature, number_roles, reordered, unit_facts
from almanac.text.names import name_tokens
from almanac.text.normalize import spelled_numbers
from almanac.text.stated import same_thing, same_value


def says_the_same(new: str, old: str) -> bool:
    """Is `new` a near-duplicate of `old` (both texts as said, already close by meaning)?"""
    return same_facts(new, old) and not reordered(new, old) and not another_value(new, old)


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
