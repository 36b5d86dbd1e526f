"""What a wiki line states, read without an LLM or the database: amounts, percentages, a
contract's term, dates, people in a role (owner, contact, signer, approver: the role is the
attribute), states and decisions, each a value (`almanac.text.stated`) of an attribute of
the page it is on (no subject: the page is the subject), so that two values of one thing can
be told apart from two things.

"Globex quote: $195k/yr" and "Globex agreed to $172,000 per year" both state the yearly USD
price (attribute `amount:usd/year:price`, values `195000·usd/year` and `172000·usd/year`):
the newer replaces the older. "price floor is $160k/yr" is another attribute
(`amount:usd/year:floor`). A statement whose thing cannot be named (a date with no cue word,
a decision) gets an attribute of its own, so it is kept and never replaces anything.
Conservative on purpose: a wrong key hides a fact.

English and Chinese both; numbers written with thousands separators, magnitudes (k, M,
万, 亿) and currency signs or words compare as one amount.
"""

from __future__ import annotations

import functools
import hashlib
import re
from decimal import Decimal

from almanac.text.amounts import PERCENT, spelled
from almanac.text.amounts import amounts as read_amounts
from almanac.text.durations import durations
from almanac.text.roles import owner
from almanac.text.stated import Stated

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
        ("renewal", r"renew|续约|续签"),  # a renewal's price is not the first quote's
        ("total", r"\btotal\b|总价|总额|合计|总计"),  # nor is a total a unit price
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


# Something said besides the cue word: a word character (a CJK one counts).
_WORDY = re.compile(r"\w")


def _decides(text: str) -> bool:
    """A sentence that tells a decision: a cue word and something decided. A heading ("## 决定",
    "Decision:") names the part of a note that holds them and decides nothing itself."""
    return _DECISION.search(text) is not None and bool(_WORDY.search(_DECISION.sub("", text)))


def _stated(attribute: str, value: str, shown: str) -> Stated:
    return Stated(attribute=attribute, value=frozenset([value]), shown=shown)


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
    """An attribute no other statement has: kept, never replacing or replaced."""
    return f"{kind}:#{hashlib.sha1(sentence.encode()).hexdigest()[:10]}"


# What an amount is per, when it is per something other than a period ("$102/seat", "per
# user", "每席位669元"): a price per seat is another thing than a total.
_PER_AFTER = re.compile(r"\s*(?:/|\bper\s+|\ba\s+)(?P<unit>[a-z]{3,})\b", re.I)
_PER_BEFORE = re.compile(r"每(?:个|位|名)?(?P<unit>[\u4e00-\u9fff]{1,2})$")
_NOT_UNIT = re.compile(r"^(?:year|yr|annum|month|mo|quarter|week|day|hour|时|年|月|季度?|周|天|日)", re.I)


_RENEWAL = re.compile(r"renew|续约|续签", re.I)


def _per(sentence: str, start: int, end: int) -> str:
    """ "/seat" for "$102/seat" and "每席位669元" ("/席位"), "" for an amount per nothing or per
    a period (the period is read with the amount)."""
    after = _PER_AFTER.match(sentence, end)
    before = _PER_BEFORE.search(sentence[max(0, start - 6) : start].rstrip())
    unit = (after and after.group("unit").lower().rstrip("s")) or (before and before.group("unit")) or ""
    return "" if not unit or _NOT_UNIT.match(unit) else f"/{unit}"


def amounts(sentence: str) -> list[Stated]:
    out = []
    for amount in read_amounts(sentence):
        if not amount.currency:
            continue
        topic = _topic("amount", sentence, amount.start, amount.end)
        if topic == "price" and _RENEWAL.search(sentence):
            topic = (
                "renewal"  # what the whole sentence is about ("pushed back on the renewal; we are at $150")
            )
        per = _per(sentence, amount.start, amount.end)
        key = f"amount:{amount.currency}/{amount.period or 'once'}{per}:{topic}"
        out.append(_stated(key, amount.fact, amount.shown))
    return out


def _percents(sentence: str) -> list[Stated]:
    out = []
    for match in PERCENT.finditer(sentence):
        topic = _topic("percent", sentence, match.start(), match.end())
        key = f"percent:{topic}" if topic else _own_key("percent", sentence + match.group(0))
        out.append(_stated(key, f"{spelled(Decimal(match.group('num')))}·%", match.group(0)))
    return out


def _terms(sentence: str) -> list[Stated]:
    if not _TERM_CUE.search(sentence):
        return []
    out = []
    for match in TERM.finditer(sentence):
        word = match.group("num").lower()
        count = int(word) if word.isdigit() else _EN_COUNT.get(word) or _ZH_COUNT.get(word)
        if not count or count > 20:
            continue
        unit = "month" if match.group("unit").lower().startswith(("mo", "个")) else "year"
        out.append(_stated("term", f"{count}·{unit}", match.group(0)))
    return out[:1]


def _dates(sentence: str) -> list[Stated]:
    out = []
    for match in DATE.finditer(sentence):
        topic = _topic("date", sentence, match.start(), match.end())
        key = f"date:{topic}" if topic else _own_key("date", sentence + match.group(0))
        out.append(_stated(key, match.group(0).lower(), match.group(0)))
    return out


# A count of things: "750 seats", "82 warehouses", "610个席位", "约9,508名员工". The thing
# counted is the attribute, so a new seat count replaces the old one.
_EN_COUNT_OF = re.compile(r"(?<![\w.$€£¥#-])(?P<num>\d{1,3}(?:,\d{3})+|\d+)\s+(?P<noun>[a-z]{2,}s)\b", re.I)
_ZH_COUNT_OF = re.compile(
    r"(?<![\d.,])(?P<num>\d{1,3}(?:,\d{3})+|\d+)\s*(?:个|名|家|台|套|间|条|座|位)(?P<noun>[\u4e00-\u9fff]{2})"
)
_TIME_NOUN = re.compile(r"^(?:second|minute|hour|day|week|month|year|time|row)s$", re.I)


def _counts(sentence: str) -> list[Stated]:
    """Counts of things (the thing counted is the attribute) and durations ("119 days",
    "79天": each its own fact, never replacing another: a pilot's length is no SLA's)."""
    out = []
    for pattern in (_EN_COUNT_OF, _ZH_COUNT_OF):
        for match in pattern.finditer(sentence):
            noun = match.group("noun").lower()
            if _TIME_NOUN.match(noun) or noun[:1] in "年月日天周":
                continue
            value = match.group("num").replace(",", "")
            out.append(_stated(f"count:{noun.rstrip('s')}", value, match.group(0)))
    for duration in durations(sentence):
        shown = sentence[duration.start : duration.end]
        out.append(
            _stated(_own_key("duration", sentence + shown), f"{duration.count}·{duration.unit}", shown)
        )
    return out


def _people(sentence: str) -> list[Stated]:
    """The person in a role (`almanac.text.roles`): the role is the attribute, so the
    customer's contact and our owner are two facts, and only a new contact replaces a contact."""
    found = owner(sentence, named=False)
    if found is None:
        return []
    who = found.who.rstrip(".")
    return [_stated(found.role, who.lower(), who)]


def _states(sentence: str) -> list[Stated]:
    if not _STATE_CUE.search(sentence):
        return []
    for name, cue in _STATE_RES:
        match = cue.search(sentence)
        if match:
            return [_stated("status", name, match.group(0))]
    return []


def statements(sentence: str) -> list[Stated]:
    """Everything `sentence` states a value of, in the order above (amounts first)."""
    return list(_statements(sentence or ""))


# A page's lines are read again for every summary of it (each reader, each size): the
# same sentences, so what they state is remembered (Stated is immutable).
@functools.lru_cache(maxsize=50_000)
def _statements(text: str) -> tuple[Stated, ...]:
    terms = _terms(text)
    found = amounts(text) + _percents(text) + terms + _dates(text)
    found += [s for s in _counts(text) if s.shown not in {t.shown for t in terms}]
    found += _people(text) + _states(text)
    if not found and _decides(text):
        found.append(_stated(_own_key("decision", text), text.strip().lower(), text.strip()))
    return tuple(found)
