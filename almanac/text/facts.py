"""What a memory's text says, read without the database: the facts that tell two close
sentences apart (`fact_signature`: numbers with their units, ids, dates, weekdays,
negation), whether two texts are the same words reordered, and whether a compression
summary still says what an original said (`summary_holds`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from almanac.search.text import THOUSANDS, segment, simplified, word_matches
from skills.builtin.text import LEADING_FILLER

# What makes two near-identical sentences different facts: numbers, ids and dates (a
# token with a digit or only Chinese numerals), weekdays and months, and negation.
_CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday weekday weekend "
    "january february march april may june july august september october november december "
    "周一 周二 周三 周四 周五 周六 周日 周末 星期一 星期二 星期三 星期四 星期五 星期六 星期日 星期天 "
    "today tomorrow yesterday tonight next last "
    "上午 下午 今天 明天 昨天".split()
)
# Days, weeks, months and years counted from now: 下周 / 上周, 下个月, 大后天, 去年.
# The segmenter splits these differently in different sentences: read from the text.
_ZH_RELATIVE = re.compile(r"(大前|大后|上上|下下|前|后|今|明|昨|去|上|下|本|这)个?(天|周|星期|礼拜|月|年)")
# English numbers written as words, as digits: "ten thousand dollars" is "$10,000", and
# "the tenth of March" the "10th".
_EN_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_EN_TENS = {
    w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
_EN_ORDINALS = {
    w: i
    for i, w in enumerate(
        "first _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split(),
        1,
    )
    if w != "_"  # "second" is a unit of time as often
} | {"twentieth": 20, "thirtieth": 30}
_EN_NUMBER_WORD = re.compile(
    rf"\b(?:(?P<tens>{'|'.join(_EN_TENS)})(?:[- ](?P<unit>{'|'.join(_EN_ONES[1:10] + [w for w in _EN_ORDINALS if _EN_ORDINALS[w] < 10])}))?"
    rf"|(?P<word>{'|'.join(_EN_ONES + list(_EN_ORDINALS))}))\b",
    re.IGNORECASE,
)

_ORDINAL_SUFFIX = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)  # one spelling: 21th


def _spelt_number(match: re.Match) -> str:
    words = [w.lower() for w in match.group("tens", "unit", "word") if w]
    value, ordinal = 0, False
    for word in words:
        if word in _EN_TENS:
            value += _EN_TENS[word]
        elif word in _EN_ORDINALS:
            value, ordinal = value + _EN_ORDINALS[word], True
        else:
            value += _EN_ONES.index(word)
    return f"{value}th" if ordinal else str(value)


_ZH_NEGATIONS = frozenset("不 没 没有 未 别 不要 不是 不会 不能 无法 从不 从未 并非 毫无 勿".split())
# English negations are stopwords the segmenter drops: found in the text itself.
_EN_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without)\b|n't\b")
_FACT_TOKEN = re.compile(r"\d|^[一二三四五六七八九十百千万两零]+$")

# What a unit next to a number changes: its magnitude (3万 / 3千, 3 million / 3 billion),
# currency, percent, time of day, duration, size. Synonyms share one spelling, so "$3
# million" and "3 million dollars" still say the same. The segmenter drops "%", "$" and
# "am", and splits "3 pm" into two tokens: they are read from the text itself.
_MAGNITUDES = {
    "hundred": "e2", "百": "e2", "k": "e3", "thousand": "e3", "千": "e3", "万": "e4", "十万": "e5",
    "m": "e6", "mn": "e6", "million": "e6", "百万": "e6", "千万": "e7", "亿": "e8", "bn": "e9",
    "billion": "e9", "十亿": "e9", "trillion": "e12", "万亿": "e12",
}  # fmt: skip
_CURRENCIES = {
    "$": "usd", "us$": "usd", "usd": "usd", "dollar": "usd", "dollars": "usd", "美元": "usd", "美金": "usd",
    "¥": "cny", "rmb": "cny", "cny": "cny", "yuan": "cny", "元": "cny", "块": "cny", "人民币": "cny",
    "€": "eur", "eur": "eur", "euro": "eur", "euros": "eur", "欧元": "eur",
    "£": "gbp", "gbp": "gbp", "pound": "gbp", "pounds": "gbp", "英镑": "gbp",
    "jpy": "jpy", "日元": "jpy", "hkd": "hkd", "港元": "hkd", "港币": "hkd",
}  # fmt: skip
_UNITS = {
    **_CURRENCIES,
    "%": "%", "percent": "%", "pct": "%", "am": "am", "a.m.": "am", "pm": "pm", "p.m.": "pm",
    "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute", "分钟": "minute",
    "h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour", "小时": "hour",
    "折": "折", "day": "day", "days": "day", "天": "day", "日": "日", "号": "日", "week": "week", "weeks": "week",
    "周": "week", "星期": "week", "month": "month", "months": "month", "个月": "month", "月": "月",
    "year": "year", "years": "year", "yr": "year", "yrs": "year", "年": "年", "岁": "岁", "点": "点",
    "点半": "点半", "点一刻": "点一刻", "点三刻": "点三刻",  # 3点半 is not 3点
    "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "kg": "kg", "g": "g", "km": "km", "cm": "cm", "mm": "mm",
}  # fmt: skip


def _alternation(words) -> str:
    # Longest first ("million" before "m"); a Latin word must end where the word ends.
    return "|".join(
        re.escape(w) + ("(?![a-z])" if w[-1].isascii() and w[-1].isalpha() else "")
        for w in sorted(words, key=len, reverse=True)
    )


_CURRENCY_BEFORE = ["$", "us$", "¥", "€", "£", "usd", "rmb", "cny", "eur", "gbp", "hkd", "jpy"]
_NUMBER_UNIT = re.compile(
    rf"(?P<pre>{_alternation(_CURRENCY_BEFORE)})?"
    r"\s?(?P<num>\d+(?:[.,]\d+)*|[一二三四五六七八九十两]+)"
    rf"\s?(?P<mag>{_alternation(_MAGNITUDES)})?\s?(?P<unit>{_alternation(_UNITS)})?",
    re.IGNORECASE,
)
# "30 years old" and "30岁" say what "Alice is 30" does: an age is its bare number.
_AGE_AFTER = re.compile(r"\s*old\b", re.IGNORECASE)
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip


def _zh_number(text: str) -> int | None:
    """三 → 3, 十 → 10, 二十五 → 25, 三十 → 30; None for what is not one number, such as the
    ranges that adjacent digits say (一两天 "a day or two", 两三万 "20–30 thousand", 三四十)."""
    try:
        if "十" in text:
            tens, _, ones = text.partition("十")
            if len(tens) > 1 or len(ones) > 1:
                return None
            return (_ZH_DIGIT[tens] if tens else 1) * 10 + (_ZH_DIGIT[ones] if ones else 0)
        return _ZH_DIGIT[text] if len(text) == 1 else None
    except KeyError:
        return None


def _amount(num: str, magnitude: str = "") -> str:
    """A number written out in digits with its magnitude multiplied in: ("3", "e4") →
    "30000", ("三", "e4") → "30000", ("3.5", "e6") → "3500000"; as written when unreadable."""
    if num.isascii():
        try:
            value = Decimal(num.replace(",", ""))
        except InvalidOperation:
            return num
    else:
        whole = _zh_number(num)
        if whole is None:
            return num
        value = Decimal(whole)
    if magnitude:
        value = value.scaleb(int(magnitude[1:]))
    return format(value.normalize(), "f")


def _unit_facts(text: str) -> tuple[set[str], str]:
    """(numbers with what says how much they are, as one spelling: "30000·cny" for 3万元,
    三万元 and 30000元, "3000000·usd" for "$3M" and "$3 million", "3·pm" for "3pm" and
    "3 pm"; the text without them, whose numbers are facts as they stand)."""
    facts, rest, pos = set(), [], 0
    for match in _NUMBER_UNIT.finditer(text):
        if not any(match.group("pre", "mag", "unit")):
            continue
        facts.add(_number_fact(match, text))
        rest.append(text[pos : match.start()])
        pos = match.end()
    rest.append(text[pos:])
    return facts, " ".join(rest)


def _number_fact(match: re.Match, text: str) -> str:
    """One `_NUMBER_UNIT` match as a fact: "30000·cny", "3·pm", a bare "30"."""
    pre, num, mag, unit = (g.lower() if g else g for g in match.group("pre", "num", "mag", "unit"))
    unit = _UNITS[unit] if unit else _CURRENCIES.get(pre or "", "")
    if unit == "岁" or (unit == "year" and _AGE_AFTER.match(text, match.end())):
        unit = ""
    if unit == "折" and len(num) == 2 and num[0] in _ZH_DIGIT and num[1] in _ZH_DIGIT:
        num = f"{_ZH_DIGIT[num[0]]}.{_ZH_DIGIT[num[1]]}"  # 八五折 is 8.5折 (15% off)
    amount = _amount(num, _MAGNITUDES.get(mag or "", ""))
    return f"{amount}·{unit}" if unit else amount


def is_negated(text: str, tokens: list[str] | None = None) -> bool:
    """Does `text` say not (not, never, n't; 不, 没有, 未...)?"""
    tokens = segment(text) if tokens is None else tokens
    return bool(_EN_NEGATION.search(text.lower())) or any(t in _ZH_NEGATIONS for t in tokens)


def _normalized(text: str) -> str:
    """One spelling for numbers and script: NFKC (full-width digits), no thousands
    separators, simplified Chinese (週 is 周), numbers in words as digits, one ordinal suffix."""
    text = simplified(THOUSANDS.sub("", unicodedata.normalize("NFKC", text)))
    return _ORDINAL_SUFFIX.sub(r"\1th", _EN_NUMBER_WORD.sub(_spelt_number, text))


def fact_signature(text: str) -> tuple[frozenset[str], bool]:
    """(the facts it states, is it negated): equal for restatements of one fact ("$3M" /
    "$3 million", "3万元" / "三万元" / "30000元", "3pm" / "3 pm", "Alice is 30" / "30 years
    old"), different for "deploys on Tuesdays" / "on Thursdays", "30k" / "40k", "3万元" /
    "3千元", "3 pm" / "3 am", "likes" / "doesn't like", "八折" / "九折", "ten" / "twelve
    thousand dollars", "next" / "last Wednesday", "下周三" / "上周三".

    Numbers with a unit or magnitude are compared by amount and unit only; the other fact
    tokens (ids, dates, bare numbers, weekdays) as the segmenter writes them, a bare Chinese
    numeral in digits."""
    text = _normalized(text)
    facts, rest = _unit_facts(text)
    facts |= {m.group(1).replace("这", "本") + m.group(2) for m in word_matches(_ZH_RELATIVE, rest)}
    tokens = segment(rest)
    for token in tokens:
        if token in _CALENDAR_WORDS or re.search(r"\d", token):
            facts.add(token)
        elif _FACT_TOKEN.search(token):
            facts.add(_amount(token))
    return frozenset(facts), is_negated(text, tokens)


# A name: a Latin word with a capital ("signed with Acme", "Alice prefers", GitHub, SOC),
# wherever it stands: a summary that drops the first word of a memory may drop its subject.
# Chinese names cannot be told from other words without NER.
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9'-]*")  # not the tail of an id: 9144MA5F


def _names(text: str) -> set[str]:
    names = set()
    for match in _LATIN_WORD.finditer(text):
        word = match.group()
        if any(c.isupper() for c in word):
            names.update(segment(word))
    return names


def key_facts(text: str) -> frozenset[str]:
    """What a summary of `text` must still say (see `summary_terms`): its facts (numbers
    with their units, ids, dates, weekdays) and its names."""
    return fact_signature(text)[0] | _names(text)


# A number's role is the word it is attached to: the nearest word before it ("client 15",
# "week 9", "合同金额是3万元"). Only the end of the text before a number is segmented.
_ROLE_WINDOW = 40


def number_roles(text: str) -> frozenset[tuple[str, str]]:
    """(role, number) pairs, numbers spelt as `fact_signature` spells them: "Client 15 ...
    week 9" gives (client, 15) and (week, 9), which "Client 9 ... week 15" does not, though
    both state the numbers 9 and 15."""
    text = _normalized(text)
    pairs = set()
    for match in _NUMBER_UNIT.finditer(text):
        if not (any(match.group("pre", "mag", "unit")) or match.group("num").isascii()):
            continue  # a bare Chinese numeral is part of a word as often (一起, 三星)
        begins = match.start("pre") if match.group("pre") else match.start("num")
        if begins and re.match(r"[A-Za-z]", text[begins - 1]):
            continue  # inside an id ("MA5F", "v2"): the id is the fact, compared whole
        before = segment(text[max(0, match.start() - _ROLE_WINDOW) : match.start()])
        role = next((t for t in reversed(before) if not re.search(r"\d", t)), "")
        pairs.add((role, _number_fact(match, text)))
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
    return _names(_unit_facts(_normalized(text))[1])


# Sentences, for where a summary says "not": "3.5" is not the end of one.
_SENTENCE_SPLIT = re.compile(r"[。！？；;!?\n]+|\.(?=\s|$)")


def sentences(text: str) -> list[str]:
    return [part for part in _SENTENCE_SPLIT.split(text) if part.strip()]


@dataclass(frozen=True)
class SummaryTerms:
    """What `summary_holds` looks things up in: every term of a summary (its words and its
    facts, spelt as `key_facts` spells them) and, per sentence, its words and whether it is
    negated."""

    terms: frozenset[str]
    sentences: tuple[tuple[frozenset[str], bool], ...]


def summary_terms(text: str) -> SummaryTerms:
    parts = []
    for sentence in sentences(text):
        tokens = segment(sentence)
        parts.append((frozenset(tokens), is_negated(sentence, tokens)))
    return SummaryTerms(terms=frozenset(segment(text)) | fact_signature(text)[0], sentences=tuple(parts))


def reordered(first: str, second: str) -> bool:
    """The same words in another order ("tea over coffee" / "coffee over tea", "Alice reports
    to Bob" / "Bob reports to Alice", "从阿里云迁移到腾讯云" / the reverse): another fact,
    however close the vectors."""
    a, b = segment(first), segment(second)
    if set(a) != set(b):
        return False
    return list(dict.fromkeys(a)) != list(dict.fromkeys(b))


# Of the words of an original, the share a summary must still use (stemmed, stopwords
# left out): "allergic to peanuts, shellfish and sesame" is not held by "allergic to peanuts".
KEPT_WORDS_SHARE = 0.9
# Openers and closing particles that only remind or insist ("提醒：…", "再说一次，…", "…哦",
# "Reminder: …", "FYI, …"): a summary need not repeat them to say what the original said.
_REMINDER_OPENER = re.compile(
    r"^(?:(?:(?:再)?提醒(?:一下|大家)?|记得|记住|(?:请)?注意|再说一(?:次|遍)|再强调一(?:下|次|遍)|重申(?:一下)?|"
    r"重复一(?:下|遍)|补充一下)[\s,，:：、-]*|"
    r"(?:(?:just )?a (?:quick )?reminder|reminder|remember|(?:please )?note|fyi|as (?:a )?reminder|again)"
    r"[\s,，:：、-]+)",
    re.IGNORECASE,
)
_CLOSING = re.compile(r"[\s哦啊呀吧呢嘛啦。.!！；;,，]+$")


def without_reminder(text: str) -> str:
    """`text` without an opener that only reminds ("提醒：", "Reminder:", "FYI,") and
    without closing particles and punctuation."""
    stripped = _REMINDER_OPENER.sub("", LEADING_FILLER.sub("", text.strip()))
    return _CLOSING.sub("", stripped) or text.strip()


def summary_holds(original: str, summary: SummaryTerms) -> bool:
    """Does a summary (its `summary_terms`) still say `original`: all its key facts (ids,
    amounts with their units, dates, names), nine in ten of its words, and each of its
    sentences as negated as the summary sentences closest to it ("does not eat pork" is not
    held by "eats pork")?"""
    original = without_reminder(original)
    if not key_facts(original) <= summary.terms:
        return False
    words = set(segment(original))
    if len(words & summary.terms) < KEPT_WORDS_SHARE * len(words):
        return False
    return all(_said_alike(sentence, summary) for sentence in sentences(original))


def _said_alike(sentence: str, summary: SummaryTerms) -> bool:
    """Is one of the summary sentences sharing most words with `sentence` negated as it is?"""
    words = segment(sentence)
    negated = is_negated(sentence, words)
    if not summary.sentences:
        return not negated
    overlap = [(len(summary_words.intersection(words)), neg) for summary_words, neg in summary.sentences]
    best = max(n for n, _ in overlap)
    return any(neg == negated for n, neg in overlap if n == best)


# What skills.builtin.claims reads a text's values and subject with, and memories.topics names.
name_tokens = _names
CALENDAR_WORDS = _CALENDAR_WORDS
NEGATION_WORDS_ZH = _ZH_NEGATIONS
NUMBER_WITH_UNIT = _NUMBER_UNIT
ZH_RELATIVE_DATE = _ZH_RELATIVE
