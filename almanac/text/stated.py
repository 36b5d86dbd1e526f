"""The one "same fact?" rule: a value a text states (`Stated`: what it is a value of, and
the value in one spelling), whether two are of the same thing (`same_thing`) and whether
they say the same value (`same_value`).

What a value is of: a `subject` when the text names one (a memory: "客户C合同金额…" is of
"客户 c 合同 金额"; "" when it names none, so that it is of the scope it is read in: a wiki
page) and an `attribute` (what of the subject: "owner", "status", or a page's topic such as
"amount:usd/year:price"). The value: a set of facts each in one spelling ("300000·cny" for
30万元 and 300,000元, "172000·usd/year", "12·%", "3·year", a name or date as written,
"¬" when said negated). Readers: `almanac.text.claims` (a memory's one value, its subject
read from the text) and `almanac.text.statements` (each value a wiki line states, the page
as the subject).

Two values are compared only within one scope: a page's lines, or a tenant's memories of one
visibility; the caller picks the scope (the page it reads, the rows it queries).
"""

from __future__ import annotations

from dataclasses import dataclass

# A key longer than this is cut: it is stored (memories.Memory.fact_key).
MAX_KEY_CHARS = 200


@dataclass(frozen=True)
class Stated:
    """`subject`: its words (sorted, one space apart), "" for the scope's own thing;
    `attribute`: what of the subject; `value`: the facts it says that is; `old`: for an
    explicit correction ("not 30k, it's 50k"), the value it says was wrong; `shown`: the
    value as written, where one part of the text says it."""

    subject: str = ""
    attribute: str = ""
    value: frozenset[str] = frozenset()
    old: frozenset[str] = frozenset()
    shown: str = ""

    @property
    def key(self) -> str:
        """What it is a value of, in one string: "客户 c 合同 金额", "apollo ·owner", or on a
        page (no subject) the attribute alone, "amount:usd/year:price"."""
        if not self.attribute:
            key = self.subject
        elif self.subject:
            key = f"{self.subject} ·{self.attribute}"
        else:
            key = self.attribute
        return key[:MAX_KEY_CHARS]

    @property
    def correction(self) -> bool:
        return bool(self.old)

    @classmethod
    def of_key(cls, key: str, value: frozenset[str], old: frozenset[str] = frozenset()) -> Stated:
        """A value of the thing a stored `key` names (a memory's `fact_key`)."""
        subject, _, attribute = key.partition(" ·")
        return cls(subject=subject, attribute=attribute, value=value, old=old)


def same_thing(first: Stated, second: Stated) -> bool:
    """Are two values (read in one scope) values of the same thing? The same subject and
    attribute; two without a subject are of the scope's own thing."""
    return first.key == second.key


def same_value(first: frozenset[str], second: frozenset[str]) -> bool:
    """Do two values say the same? Amounts compare without their unit when one side has
    none ("不是30万，是50万" names 500000 where the memory it corrects says 500000·cny)."""
    if first == second:
        return True
    return _amounts(first) == _amounts(second) and (_unitless(first) or _unitless(second))


def holds_value(values: frozenset[str], wanted: frozenset[str]) -> bool:
    """Does `values` include every one of `wanted` (a correction's old value)?"""
    return bool(wanted) and _amounts(wanted) <= _amounts(values)


def _amounts(values: frozenset[str]) -> frozenset[str]:
    return frozenset(v.split("·")[0] for v in values)


def _unitless(values: frozenset[str]) -> bool:
    return not any("·" in v for v in values)
