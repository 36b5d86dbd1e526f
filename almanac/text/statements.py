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
from decimal import Decimal, InvalidOperation

_NUM = r"(?P<num>\d{1,3}(?:[,，]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_MAG = r"(?P<mag>million|thousand|bn|mn|[kKmM](?![A-Za-z])|万|亿|千)?"
_PRE = r"(?P<pre>US\$|\$|€|£|¥|￥|USD|EUR|GBP|RMB|CNY)"
_POST = r"(?P<post>美元|欧元|英镑|人民币|元|块|USD|EUR|GBP|RMB|CNY|dollars?|euros?)"
_PER = (
    r"(?P<per>\s*(?:/\s*(?:yr|year|y|annum|mo|month|年|月)(?![A-Za-z])|per\s+(?:year|annum|month)|"
    r"a\s+(?:year|month)|annually|yearly|monthly|p\.a\.|每年|每月|一年|/年|/月))?"
)
# A number with a currency before or after it (the code keeps only those with one).
AMOUNT = re.compile(rf"{_PRE}?\s?{_NUM}\s?{_MAG}\s?{_POST}?{_PER}", re.IGNORECASE)
_MAGNITUDES = {"k": 3, "thousand": 3, "千": 3, "万": 4, "m": 6, "mn": 6, "million": 6, "亿": 8, "bn": 9}
_CURRENCIES = {
    "$": "usd", "us$": "usd", "usd": "usd", "dollar": "usd", "dollars": "usd", "美元": "usd",
    "€": "eur", "eur": "eur", "euro": "eur", "euros": "eur", "欧元": "eur", "£": "gbp", "gbp": "gbp",
    "英镑": "gbp", "¥": "cny", "￥": "cny", "rmb": "cny", "cny": "cny", "元": "cny", "块": "cny", "人民币": "cny",
}  # fmt: skip
_YEARLY_BEFORE = re.compile(
    r"(?:每年|年费|年度|年付|annual|yearly|ARR)\s*(?:费用|价格|报价)?\s*(?:为|是|:|：)?\s*$", re.I
)
_MONTHLY_BEFORE = re.compile(r"(?:每月|月费|monthly|MRR)\s*(?:费用|价格)?\s*(?:为|是|:|：)?\s*$", re.I)
PERCENT = re.compile(r"(?P<num>\d+(?:\.\d+)?)\s?(?:%|％|percent\b)", re.IGNORECASE)
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


def _topic(kind: str, sentence: str, match: re.Match | None = None) -> str:
    """The first topic whose cue is in the clause around `match` (the sentence without one)."""
    if match is not None:
        before = _CLAUSE_MARK.split(sentence[max(0, match.start() - 40) : match.start()])[-1]
        after = _CLAUSE_MARK.split(sentence[match.end() : match.end() + 20])[0]
        sentence = before + match.group(0) + after
    for name, cue in _TOPIC_RES[kind]:
        if not cue.pattern or cue.search(sentence):
            return name
    return ""


def _own_key(kind: str, sentence: str) -> str:
    """A key no other statement has: kept, never replacing or replaced."""
    return f"{kind}:#{hashlib.sha1(sentence.encode()).hexdigest()[:10]}"


def _amount_value(match: re.Match) -> str | None:
    try:
        value = Decimal(re.sub(r"[,，]", "", match.group("num")))
    except InvalidOperation:
        return None
    mag = (match.group("mag") or "").lower()
    return format(value.scaleb(_MAGNITUDES.get(mag, 0)).normalize(), "f")


def _period(match: re.Match, sentence: str) -> str:
    per = (match.group("per") or "").strip().lower()
    before = sentence[max(0, match.start() - 12) : match.start()]
    if per:
        return "month" if any(w in per for w in ("mo", "月")) else "year"
    if _YEARLY_BEFORE.search(before):
        return "year"
    if _MONTHLY_BEFORE.search(before):
        return "month"
    return "once"


def amounts(sentence: str) -> list[Statement]:
    out = []
    for match in AMOUNT.finditer(sentence):
        value = _amount_value(match)
        currency = _CURRENCIES.get((match.group("pre") or match.group("post") or "").lower(), "")
        if value is None or not currency:
            continue
        period = _period(match, sentence)
        key = f"amount:{currency}/{period}:{_topic('amount', sentence, match)}"
        out.append(Statement(key, f"{value} {currency}/{period}", match.group(0).strip(), "amount"))
    return out


def _percents(sentence: str) -> list[Statement]:
    out = []
    for match in PERCENT.finditer(sentence):
        topic = _topic("percent", sentence, match)
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
        topic = _topic("date", sentence, match)
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
