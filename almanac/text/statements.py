"""What a sentence states, read without an LLM or the database: amounts, percentages, a
contract's term, dates, owners, states and decisions, each with a *key* saying what it is a
value of, so that two values of one thing can be told apart from two things.

"Globex quote: $195k/yr" and "Globex agreed to $172,000 per year" both state the yearly USD
price (key `amount:usd/year:price`, values `195000` and `172000`): the newer replaces the
older. "price floor is $160k/yr" is another key (`amount:usd/year:floor`). A statement whose
thing cannot be named (a date with no cue word, a decision) gets a key of its own, so it is
kept and never replaces anything. Conservative on purpose: a wrong key hides a fact.

English and Chinese both; numbers written with thousands separators, magnitudes (k, M,
万, 亿) and currency signs or words compare as one amount.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from decimal import Decimal

from almanac.text.amounts import PERCENT
from almanac.text.amounts import amounts as read_amounts

_ZH_COUNT = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "十": 10}
_EN_COUNT = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10, "twelve": 12}
TERM = re.compile(
    r"(?<![\d/])(?P<num>\d{1,2}|one|two|three|four|five|six|ten|twelve|[一二两三四五六十])\s?-?\s?"
    r"(?P<unit>years?|yrs?|months?|年(?![前后底初中内\d])|个月)(?!\s*(?:ago|old))",
    re.IGNORECASE,
)
_TERM_CUE = re.compile(
    r"term|contract|deal|commit|renew|agreement|subscription|licen[cs]e|\bfor\s+(?:\d|one|two|three|four|five)|"
    r"合同|合约|续约|期限|签|订阅|协议",
    re.I,
)
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
DATE = re.compile(
    rf"\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{4}}年\d{{1,2}}月\d{{1,2}}[日号]|\d{{1,2}}月\d{{1,2}}[日号]|"
    rf"\b(?:{_MONTHS})[a-z]*\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})[a-z]*(?:\s+\d{{4}})?\b",
    re.IGNORECASE,
)
# What an amount, a percentage or a date is of, when the sentence says.
_TOPICS = {
    "amount": [
        ("floor", r"floor|minimum|lowest|walk[- ]?away|bottom line|底价|最低|底线"),
        ("discount", r"discount|rebate|折扣|优惠"),
        ("budget", r"budget|预算"),
        ("price", r""),  # an amount with no other cue on a customer page is its price
    ],
    "percent": [
        ("discount", r"discount|off\b|rebate|折扣|优惠"),
        ("margin", r"margin|floor|毛利|利润|底线"),
        ("uplift", r"uplift|increase|raise|涨价|上调|涨幅"),
    ],
    "date": [
        ("renewal", r"renew|续约|续签"),
        ("deadline", r"due|deadline|by\b|截止|之前|前完成"),
        ("launch", r"go[- ]live|launch|上线|发布"),
        ("signing", r"sign|签约|签署"),
        ("start", r"start|kick[- ]?off|开始|启动"),
        ("end", r"expir|end of|到期|结束"),
    ],
}
_TOPIC_RES = {
    kind: [(name, re.compile(cue, re.I)) for name, cue in topics] for kind, topics in _TOPICS.items()
}
_OWNER = [
    re.compile(
        r"(?i:owner|account (?:owner|manager)|point of contact|\bPOC|\blead|负责人|对接人)\s*"
        r"(?i:is now|is|:|：|changed to|moves to|→|现在是|改为|换成|变更为|是|为)\s*"
        r"(?P<who>[A-Z][\w.-]*(?: [A-Z][\w.-]*)?|[\w.+-]+@[\w.-]+\w|[\u4e00-\u9fff]{2,3})",
    ),
    re.compile(
        r"(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?) (?:now owns|will own|owns|takes over|is taking over)\b"
    ),
    re.compile(r"(?:改由|由|交给)(?P<who>[\u4e00-\u9fff]{2,3})(?:来)?(?:负责|接手|跟进)"),
]
_STATES = [
    ("signed", r"\bsigned\b|已签约|签约了|签了合同|已签署"),
    ("renewed", r"\brenewed\b|已续约|续约了"),
    ("churned", r"\bchurn(?:ed)?\b|流失"),
    ("lost", r"closed[- ]lost|\blost the deal\b|丢单"),
    ("on hold", r"\bon hold\b|\bpaused\b|暂停|搁置"),
    ("cancelled", r"\bcancell?ed\b|已取消|取消了"),
    ("live", r"\bwent live\b|\bis live\b|已上线|上线了"),
]
_STATE_RES = [(name, re.compile(cue, re.I)) for name, cue in _STATES]
_STATE_CUE = re.compile(r"deal|contract|renewal|status|account|合同|续约|状态|客户|项目|订单", re.I)
_DECISION = re.compile(
    r"\b(?:decided|agreed|approved|decision|signed off)\b|决定|同意|敲定|拍板|批准|确认", re.I
)


@dataclass(frozen=True)
class Statement:
    """`key`: what it is a value of; `value`: the value compared (one spelling); `shown`:
    as written; `kind`: amount, percent, term, date, owner, status, decision."""

    key: str
    value: str
    shown: str
    kind: str


_CLAUSE_MARK = re.compile(r"[;；,，。]")


def _topic(kind: str, sentence: str, start: int | None = None, end: int = 0) -> str:
    """The first topic whose cue is in the clause around `start`..`end` (the sentence
    without them)."""
    if start is not None:
        before = _CLAUSE_MARK.split(sentence[max(0, start - 40) : start])[-1]
        after = _CLAUSE_MARK.split(sentence[end : end + 20])[0]
        sentence = before + sentence[start:end] + after
    for name, cue in _TOPIC_RES[kind]:
        if not cue.pattern or cue.search(sentence):
            return name
    return ""


def _own_key(kind: str, sentence: str) -> str:
    """A key no other statement has: kept, never replacing or replaced."""
    return f"{kind}:#{hashlib.sha1(sentence.encode()).hexdigest()[:10]}"


def amounts(sentence: str) -> list[Statement]:
    out = []
    for amount in read_amounts(sentence):
        if not amount.currency:
            continue
        period = amount.period or "once"
        topic = _topic("amount", sentence, amount.start, amount.end)
        key = f"amount:{amount.currency}/{period}:{topic}"
        out.append(Statement(key, f"{amount.value} {amount.currency}/{period}", amount.shown, "amount"))
    return out


def _percents(sentence: str) -> list[Statement]:
    out = []
    for match in PERCENT.finditer(sentence):
        topic = _topic("percent", sentence, match.start(), match.end())
        key = f"percent:{topic}" if topic else _own_key("percent", sentence + match.group(0))
        value = format(Decimal(match.group("num")).normalize(), "f")
        out.append(Statement(key, f"{value}%", match.group(0), "percent"))
    return out


def _terms(sentence: str) -> list[Statement]:
    if not _TERM_CUE.search(sentence):
        return []
    out = []
    for match in TERM.finditer(sentence):
        word = match.group("num").lower()
        count = int(word) if word.isdigit() else _EN_COUNT.get(word) or _ZH_COUNT.get(word)
        if not count or count > 20:
            continue
        unit = "month" if match.group("unit").lower().startswith(("mo", "个")) else "year"
        out.append(Statement("term", f"{count} {unit}", match.group(0), "term"))
    return out[:1]


def _dates(sentence: str) -> list[Statement]:
    out = []
    for match in DATE.finditer(sentence):
        topic = _topic("date", sentence, match.start(), match.end())
        key = f"date:{topic}" if topic else _own_key("date", sentence + match.group(0))
        out.append(Statement(key, match.group(0).lower(), match.group(0), "date"))
    return out


def _owners(sentence: str) -> list[Statement]:
    for pattern in _OWNER:
        match = pattern.search(sentence)
        if match:
            who = match.group("who").strip().rstrip(".")
            return [Statement("owner", who.lower(), who, "owner")]
    return []


def _states(sentence: str) -> list[Statement]:
    if not _STATE_CUE.search(sentence):
        return []
    for name, cue in _STATE_RES:
        match = cue.search(sentence)
        if match:
            return [Statement("status", name, match.group(0), "status")]
    return []


def statements(sentence: str) -> list[Statement]:
    """Everything `sentence` states a value of, in the order above (amounts first)."""
    return list(_statements(sentence or ""))


# A page's lines are read again for every summary of it (each reader, each size): the
# same sentences, so what they state is remembered (Statement is immutable).
@functools.lru_cache(maxsize=50_000)
def _statements(text: str) -> tuple[Statement, ...]:
    found = amounts(text) + _percents(text) + _terms(text) + _dates(text) + _owners(text) + _states(text)
    if not found and _DECISION.search(text):
        found.append(Statement(_own_key("decision", text), text.strip().lower(), text.strip(), "decision"))
    return tuple(found)
