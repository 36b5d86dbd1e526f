"""The facts a text states, read without the database: what tells two close sentences
apart (`fact_signature`: numbers with their units, ids, dates, weekdays, negation; each
number's role, `number_roles`; codes), and whether two texts are the same words reordered.
Numbers are read by `almanac.text.amounts`, one spelling each."""

from __future__ import annotations

import re
import unicodedata

from almanac.search.text import segment, word_matches
from almanac.text.amounts import quantities, spelled_number
from almanac.text.names import name_tokens
from almanac.text.normalize import spelled_numbers

# What makes two near-identical sentences different facts: numbers, ids and dates (a
# token with a digit or only Chinese numerals), weekdays and months, and negation.
CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday weekday weekend "
    "january february march april may june july august september october november december "
    "周一 周二 周三 周四 周五 周六 周日 周末 星期一 星期二 星期三 星期四 星期五 星期六 星期日 星期天 "
    "today tomorrow yesterday tonight next last "
    "上午 下午 今天 明天 昨天".split()
)
# Days, weeks, months and years counted from now: 下周 / 上周, 下个月, 大后天, 去年.
# The segmenter splits these differently in different sentences: read from the text.
ZH_RELATIVE_DATE = re.compile(
    r"(大前|大后|上上|下下|前|后|今|明|昨|去|上|下|本|这)个?(天|周|星期|礼拜|月|年)"
)
NEGATION_WORDS_ZH = frozenset("不 没 没有 未 别 不要 不是 不会 不能 无法 从不 从未 并非 毫无 勿".split())
# English negations are stopwords the segmenter drops: found in the text itself.
_EN_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without)\b|n't\b")
_FACT_TOKEN = re.compile(r"\d|^[一二三四五六七八九十百千万两零]+$")


def unit_facts(text: str) -> tuple[set[str], str]:
    """(numbers with what says how much they are, as one spelling: "30000·cny" for 3万元,
    三万元 and 30000元, "3000000·usd" for "$3M" and "$3 million", "3·pm" for "3pm" and
    "3 pm"; the text without them, whose numbers are facts as they stand)."""
    facts, rest, pos = set(), [], 0
    for quantity in quantities(text):
        if not quantity.qualified:
            continue
        facts.add(quantity.fact)
        rest.append(text[pos : quantity.start])
        pos = quantity.end
    rest.append(text[pos:])
    return facts, " ".join(rest)


def is_negated(text: str, tokens: list[str] | None = None) -> bool:
    """Does `text` say not (not, never, n't; 不, 没有, 未...)?"""
    tokens = segment(text) if tokens is None else tokens
    return bool(_EN_NEGATION.search(text.lower())) or any(t in NEGATION_WORDS_ZH for t in tokens)


def fact_signature(text: str) -> tuple[frozenset[str], bool]:
    """(the facts it states, is it negated): equal for restatements of one fact ("$3M" /
    "$3 million", "3万元" / "三万元" / "30000元", "3pm" / "3 pm", "Alice is 30" / "30 years
    old"), different for "deploys on Tuesdays" / "on Thursdays", "30k" / "40k", "3万元" /
    "3千元", "3 pm" / "3 am", "likes" / "doesn't like", "八折" / "九折", "ten" / "twelve
    thousand dollars", "next" / "last Wednesday", "下周三" / "上周三".

    Numbers with a unit or magnitude are compared by amount and unit only; the other fact
    tokens (ids, dates, bare numbers, weekdays) as the segmenter writes them, a bare Chinese
    numeral in digits."""
    text = spelled_numbers(text)
    facts, rest = unit_facts(text)
    facts |= {m.group(1).replace("这", "本") + m.group(2) for m in word_matches(ZH_RELATIVE_DATE, rest)}
    tokens = segment(rest)
    for token in tokens:
        if token in CALENDAR_WORDS or re.search(r"\d", token):
            facts.add(token)
        elif _FACT_TOKEN.search(token):
            facts.add(spelled_number(token))
    return frozenset(facts), is_negated(text, tokens)


def key_facts(text: str) -> frozenset[str]:
    """What a summary of `text` must still say (see `summary_terms`): its facts (numbers
    with their units, ids, dates, weekdays) and its names."""
    return fact_signature(text)[0] | name_tokens(text)


# A number's role is the word it is attached to: the nearest word before it ("client 15",
# "week 9", "合同金额是3万元"). Only the end of the text before a number is segmented.
_ROLE_WINDOW = 40


def number_roles(text: str) -> frozenset[tuple[str, str]]:
    """(role, number) pairs, numbers spelt as `fact_signature` spells them: "Client 15 ...
    week 9" gives (client, 15) and (week, 9), which "Client 9 ... week 15" does not, though
    both state the numbers 9 and 15."""
    text = spelled_numbers(text)
    pairs = set()
    for quantity in quantities(text):
        if not (quantity.qualified or quantity.shown.isascii()):
            continue  # a bare Chinese numeral is part of a word as often (一起, 三星)
        if quantity.start and re.match(r"[A-Za-z]", text[quantity.start - 1]):
            continue  # inside an id ("MA5F", "v2"): the id is the fact, compared whole
        before = segment(text[max(0, quantity.start - _ROLE_WINDOW) : quantity.start])
        role = next((t for t in reversed(before) if not re.search(r"\d", t)), "")
        pairs.add((role, quantity.fact))
    return frozenset(pairs)


# A code written in lowercase letters only ("ldecjucdkbr"): a Latin word of five letters or
# more with four consonants in a row or fewer than one vowel in four letters. There is no
# English vocabulary to look words up in; the odd word this takes for a code ("strengths")
# is a fact both texts state when they say the same.
_LETTER_WORD = re.compile(r"(?<![A-Za-z])[A-Za-z]{5,}(?![A-Za-z])")
_CONSONANT_RUN = re.compile(r"[b-df-hj-np-tv-xz]{4}")


def codes(text: str) -> frozenset[str]:
    """The codes in `text` that have no digit in them (those that have one are facts of
    `fact_signature` already)."""
    found = set()
    for word in _LETTER_WORD.findall(unicodedata.normalize("NFKC", text)):
        word = word.lower()
        if _CONSONANT_RUN.search(word) or 4 * sum(c in "aeiouy" for c in word) < len(word):
            found.add(word)
    return frozenset(found)


def reordered(first: str, second: str) -> bool:
    """The same words in another order ("tea over coffee" / "coffee over tea", "Alice reports
    to Bob" / "Bob reports to Alice", "从阿里云迁移到腾讯云" / the reverse): another fact,
    however close the vectors."""
    a, b = segment(first), segment(second)
    if set(a) != set(b):
        return False
    return list(dict.fromkeys(a)) != list(dict.fromkeys(b))
