"""What one memory states a value of, read without the database or an LLM: its *claim* (a
value, `almanac.text.stated`, of its subject + attribute; the key of both is what is stored),
an explicit correction ("不是30万，是50万", "not 30k, it's 50k") and its kind (preference,
decision, ...).

"客户C合同金额30万元" and "客户C合同金额调整为50万元" have one key (客户 c 合同 金额) and two
values (300000·cny, 500000·cny): the newer supersedes the older (memories.services.supersede).
A key is built from the words left when the values (numbers with their units, dates, an
owner's name, a status, a preference's object) and the words that only say "changed"
(调整为, 改为, now, actually, moved to) are taken out: restatements share it, other
subjects do not. Conservative on purpose: a text that states no value, or says too much
to be about one thing, has no claim (superseding the wrong memory hides a fact).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from almanac.search.text import segment
from almanac.text.amounts import quantities
from almanac.text.facts import (
    CALENDAR_WORDS,
    NEGATION_WORDS_ZH,
    ZH_RELATIVE_DATE,
    fact_signature,
    is_negated,
    unit_facts,
)
from almanac.text.normalize import spelled_numbers
from almanac.text.roles import owner
from almanac.text.stated import MAX_KEY_CHARS, Stated

# A text of more words than this states more than one thing: no claim.
MAX_KEY_TOKENS = 12

# Words that say a value changed or is being corrected, not what it is about.
_CHANGE_WORDS = (
    "调整 调整为 改为 改成 改 变更 更新 更改 变为 变成 换成 换 现在 目前 已经 最新 其实 更正 纠正 实际上 实际 应该 "
    "改到 推迟 推迟到 提前 提前到 延期 延期到 延后 为 是 成 到 了 由 新 "
    "actually actual now currently current moved move changed change updated update correction correct "
    "corrected revised revise adjusted adjust increased decreased raised lowered pushed postponed "
    "rescheduled delayed set become became instead meant new"
)
# The end of a value written in a sentence: a stop that is no decimal point ("$1.2 billion.").
_VALUE_END = r"(?:[.;!?](?!\d)|$)"
_CORRECTION = [
    re.compile(
        r"不是(?P<old>[^，,。；;！!？?]+?)[，,、\s]*(?:而|应该|应当|其实)?是(?P<new>[^，,。；;！!？?]+)"
    ),
    re.compile(
        r"\bnot (?P<old>[^,;!?]+?),?\s+(?:but rather|but|rather|it'?s|it is|it was|but it'?s)\s+"
        rf"(?P<new>[^,;!?]+?){_VALUE_END}",
        re.IGNORECASE,
    ),
]
# A change said with the old value and the new ("预算从200万调整为250万", "由3月12日改到3月19日",
# "the budget went from 50k to 80k", "moved from March 12 to March 19"): read only when both are
# values (amounts, dates, times), so "moved from Building A to Building B" is no claim.
_FROM_TO = [
    re.compile(
        r"[从由](?P<old>[^，,。；;！!？?从由]+?)(?:调整|更改|变更|改|变|更新|上调|下调|提高|降低|增加|减少|涨|降|"
        r"推迟|提前|延期|延后|挪|移)(?:为|到|成|至)(?P<new>[^，,。；;！!？?]+)"
    ),
    re.compile(
        r"\b(?:changed|changes|moved|moves|raised|increased|cut|lowered|reduced|decreased|went|goes|rose|"
        r"dropped|fell|adjusted|updated|revised|bumped|pushed|shifted|grew|jumped|slipped|rescheduled|"
        r"postponed|delayed|is up|is down)\b[^,;.!?]{0,20}?\bfrom (?P<old>[^,;!?]+?) to "
        rf"(?P<new>[^,;!?]+?){_VALUE_END}",
        re.IGNORECASE,
    ),
]
# A bare "actually ..." / "其实 ..." / "更正：..." is a correction of whatever had this key.
_CORRECTION_CUE = re.compile(r"^\s*(?:actually|correction|i meant|更正|纠正|其实|说错了)\b", re.IGNORECASE)

# (attribute, pattern with a `subj` and a `val` group): a status, a standing rule, a
# preference (an owner is read by `almanac.text.roles`).
_ATTRIBUTES = [
    ("status", re.compile(r"^(?P<subj>.+?)的?状态(?:是|为|改为|变为|变成|已|：|:)\s*(?P<val>[^，,。；;]+)")),
    ("status", re.compile(r"^(?P<subj>.+?)(?:'s)? status (?:is|is now|changed to|became|:)\s*(?P<val>[\w -]+)", re.I)),
    ("rule", re.compile(r"^(?:以后|今后|从今以后|从现在起)[，,]?(?P<subj>[^，,。；;]+?)都(?P<val>[^，,。；;]+)")),
    ("rule", re.compile(r"^(?:from now on|going forward|from here on|moving forward),?\s+(?:all\s+)?(?P<subj>[^,;.!?]+?)\s+(?:should |must |will |shall )?(?:always |all )?(?:go|goes|be|are|is|get|gets)(?: (?:done|handled|sent|submitted|filed|paid))?\s+(?:through|via|by|with|in|on|to)\s+(?P<val>[^,;.!?]+)", re.I)),
    ("prefer", re.compile(r"^(?P<subj>.*?)(?:更|比较|最)?(?:喜欢|偏好|倾向于?|习惯)(?P<val>[^，,。；;]+)")),
    ("prefer", re.compile(r"^(?P<subj>.+?)\s+(?:prefers?|likes?|favou?rs?|would rather have)\s+(?P<val>[^,;.!?]+)", re.I)),
]  # fmt: skip

# A preference: a standing wish or rule ("以后报销都走电子流程", "从现在开始…", "一律用…",
# "from now on, always …", "Please always book …", "Going forward, I'd like …") or one the
# speaker states ("我更喜欢…", "I prefer …", "Alice prefers …"). The one definition: the
# extractor types such a fact `preference` and `kind_infer` gives it kind preference.
PREFERENCE = re.compile(
    r"(?:以后|今后|往后|之后|从今以后|从今往后|从现在起)[^，。；！？,;]{0,30}?(?:都|一律|统一|全部|总是)|从现在(?:开始|起)|"
    r"(?:一律|统一)(?:用|走|使用|按|发)|我(?:更|比较|最)?(?:喜欢|偏好|倾向|习惯)|请(?:总是|一律|统一)|"
    r"\b(?:from now on|going forward|from here on|in (?:the )?future|moving forward)\b|"
    r"^(?:please\s+)?(?:always|never)\b|\bplease always\b|\b(?:always|never)\b[^.!?]*\bfor me\b|"
    r"\bi'?d (?:like|prefer|rather)\b|\bi (?:prefer|like|love|hate|dislike|would rather)\b|\bprefers?\b|"
    r"\balways (?:use|send|book|write|reply|cc|call)\b",
    re.IGNORECASE,
)
_DECISION = [
    re.compile(r"决定|已定|敲定|拍板|定下来|达成一致"),
    re.compile(r"\b(?:we|they|the team|management|[A-Z]\w+) (?:decided|agreed)\b|\bdecision\b", re.I),
]
_CLAUSE = [re.compile(r"第[一二三四五六七八九十百\d]+条|条款"), re.compile(r"\bclause\b|\bsection \d", re.I)]


@functools.cache
def _change_tokens() -> frozenset[str]:
    return frozenset(_CHANGE_WORDS.split()) | frozenset(segment(_CHANGE_WORDS))


def _key_tokens(text: str, *, identifiers: bool = False) -> list[str]:
    """The words of `text` that name what it is about: no amounts, dates, negations or
    change words. `identifiers`: numbers without a unit and ids ("review number 3",
    "PRD-2024-013") stay: they say which thing, not how much."""
    text = ZH_RELATIVE_DATE.sub(" ", _without_numbers(text, bare=not identifiers))
    change = _change_tokens()
    return [
        settled(t)
        for t in segment(text)
        if t not in change
        and t not in NEGATION_WORDS_ZH
        and t not in CALENDAR_WORDS
        and (identifiers or (not re.search(r"\d", t) and not _numeral(t)))
    ]


def settled(token: str) -> str:
    """A stem stemmed again until it stays ("expense" → "expens" → "expen"), so that a key
    read a second time reads the same."""
    while True:
        again = segment(token)
        if len(again) != 1 or again[0] == token:
            return token
        token = again[0]


def _without_numbers(text: str, *, bare: bool) -> str:
    """`text` without its numbers that have a unit, currency or magnitude (30万元, $50k/yr,
    3 pm) and, with `bare`, without its other numbers too."""
    rest, pos = [], 0
    for quantity in quantities(text):
        if bare or quantity.qualified:
            rest.append(text[pos : quantity.start])
            pos = quantity.end
    rest.append(text[pos:])
    return " ".join(rest)


def _numeral(token: str) -> bool:
    return bool(re.fullmatch(r"[一二三四五六七八九十百千万两零]+", token))


def key_normalize(text: str) -> str:
    """A key as stored: its words (segmented, stemmed, change words out), sorted, and the
    attribute it names ("·owner"). An extractor's key ("客户C.合同金额") and one read from the
    text meet here; a key already stored so (what `claim` and `fact_extract` give) stays as it is."""
    text = unicodedata.normalize("NFKC", text or "").strip()
    if _stored(text):
        return text[:MAX_KEY_CHARS]
    words, marked, attribute = text.partition(" ·")
    if marked and attribute.isalpha() and words == words.lower() and not re.search(r"[._·]", words):
        return key_settle(text)[:MAX_KEY_CHARS]  # a stored key whose stems were not settled yet
    subject, _, last = text.rpartition(".")
    attribute = _KEY_ATTRIBUTES.get(last.strip().lower()) if subject else None
    if attribute:  # "Apollo.owner", "Apollo.负责人": the attribute as `claim` marks it
        tokens = _key_tokens(subject.replace(".", " ").replace("_", " "))
        return Stated(subject=_subject(tokens), attribute=attribute).key if tokens else ""
    return Stated(subject=_subject(_key_tokens(text.replace(".", " ").replace("_", " ")))).key


# An extractor's last key part that names one of `_ATTRIBUTES`' attributes.
_KEY_ATTRIBUTES = {
    **dict.fromkeys(["owner", "lead", "manager", "负责人", "对接人", "主管", "牵头人"], "owner"),
    **dict.fromkeys(["status", "state", "状态"], "status"),
    **dict.fromkeys(["rule", "规则"], "rule"),
}


def key_settle(key: str) -> str:
    """A stored key with each word's stem settled (`settled`); its attribute stays."""
    if key.startswith("·"):
        return key
    words, marked, attribute = key.partition(" ·")
    tokens = sorted({settled(t) for t in words.split(" ") if t})
    return " ".join(tokens) + (f" ·{attribute}" if marked else "")


def _stored(key: str) -> bool:
    words, _, attribute = key.partition(" ·")
    if key.startswith("·") or (attribute and not attribute.isalpha()):
        return False
    tokens = words.split(" ")
    if tokens != sorted(set(tokens)) or "." in words or "_" in words:
        return False
    # Chinese words are stored beside their parts (负责人, 负责, 责人), and a part alone may
    # segment otherwise (责人 → 责, 人): a word the segmenter keeps anything of is stored.
    return all(
        (found := _key_tokens(t, identifiers=True)) == [t] or (bool(found) and not t.isascii())
        for t in tokens
    )


def _values(text: str) -> frozenset[str]:
    facts, negated = fact_signature(text)
    return facts | ({"¬"} if negated else frozenset())


def _words(text: str) -> frozenset[str]:
    change = _change_tokens()
    return frozenset(t for t in segment(text) if t not in change)


def _attribute_claim(text: str) -> Stated | None:
    found = owner(text, named=True)
    if found is not None:
        return _of_attribute(text, "owner", found.subject, found.who)
    for attribute, pattern in _ATTRIBUTES:
        match = pattern.search(text)
        if match:
            subject, value = match.group("subj").strip(" ，,:："), match.group("val").strip()
            return _of_attribute(text, attribute, subject, value)
    return None


def _of_attribute(text: str, attribute: str, subject: str, value: str) -> Stated | None:
    """The claim that `subject`'s `attribute` is `value` (both as written)."""
    words = _words(value)
    if attribute == "prefer":
        # The thing preferred is the value; its head word (the last: "window seats",
        # "靠窗的座位") is what the preference is about: "prefers tea" does not replace
        # "prefers aisle seats".
        tokens = [t for t in segment(value) if t not in _change_tokens()]
        if len(tokens) < 2:
            return None
        subject, words = f"{subject} {tokens[-1]}", frozenset(tokens[:-1])
    tokens = _key_tokens(subject)
    if not tokens or not words:
        return None
    negated = {"¬"} if is_negated(text) else set()
    return Stated(subject=_subject(tokens), attribute=attribute, value=frozenset(words) | negated)


def _subject(tokens: list[str]) -> str:
    return " ".join(sorted(set(tokens)))


def claim(text: str) -> Stated | None:
    """The one value `text` states, and of what; None when it states none or too much."""
    text = unicodedata.normalize("NFKC", (text or "").strip())
    if not text:
        return None
    for pattern in _CORRECTION + _FROM_TO:
        match = pattern.search(text)
        if not match:
            continue
        new, old = _values(match.group("new")), _values(match.group("old"))
        if not new or not old:
            if pattern in _FROM_TO:
                continue
            new, old = _words(match.group("new")), _words(match.group("old"))  # "not X, it's Y" of words
        tokens = _key_tokens(text[: match.start()] + " " + text[match.end() :])
        if len(tokens) > MAX_KEY_TOKENS or not new or new == old:
            return None
        return Stated(subject=_subject(tokens), value=new, old=old)
    body = _CORRECTION_CUE.sub("", text).strip(" ,，:：")
    found = _attribute_claim(body)
    if found is not None:
        return found
    return _value_claim(body)


def _value_claim(text: str) -> Stated | None:
    """An amount (with its unit, currency or magnitude: "80k", "200万", "$3M"), a date or a
    time of day, and what it is of. A number without any of those, or an id, alone is no
    value: "review number 3" and "review number 4", "Apollo has 12 engineers", "ticket PRD-1
    is about login" and "PRD-2 …" are two things, not one changed; next to a date word it is
    one ("March 12")."""
    facts = _values(text)
    amounts = unit_facts(spelled_numbers(text))[0]
    dated = any(not re.search(r"\d", v) and v != "¬" for v in facts)
    value = frozenset(v for v in facts if dated or v in amounts or v == "¬")
    if not value - {"¬"} or (dated and _bare_numbers(text) > 1):
        return None
    tokens = _key_tokens(text, identifiers=not dated)
    if not tokens or len(tokens) > MAX_KEY_TOKENS:
        return None
    return Stated(subject=_subject(tokens), value=value)


def _bare_numbers(text: str) -> int:
    """How many numbers without a unit `text` has: with two ("fact number 3: orchard 111",
    "moved from March 12 to March 19") which is the value is anyone's guess."""
    return sum(1 for q in quantities(text) if not q.qualified and q.shown[:1].isdigit())


def claim_value(text: str, key: str = "") -> frozenset[str]:
    """What `text` says the value of its key is: its claim's value, else (a key named by
    the extractor for a text this module cannot read) its facts, else its words."""
    found = claim(text)
    if found is not None and (not key or found.key == key or not found.key):
        return found.value
    values = _values(text)
    if values - {"¬"}:
        return values
    return _words(text) - frozenset(key.split())


def kind_infer(*, content: str, meta: dict | None, memory_type: str) -> str:
    """The memory's kind where its origin or text makes it clear, else "fact": a compression
    summary, an episodic memory (event), the extractor's fact type, then the text's own cues
    (以后…都…, "from now on", "I prefer" → preference; 决定, "we decided" → decision; 第5条,
    "clause" → clause)."""
    meta = meta or {}
    if meta.get("source") == "compression":
        return "summary"
    if memory_type == "episodic":
        return "event"
    if meta.get("fact_type") in {"preference", "decision", "event", "clause"}:
        return meta["fact_type"]
    for kind, patterns in (("preference", [PREFERENCE]), ("decision", _DECISION), ("clause", _CLAUSE)):
        if any(p.search(content or "") for p in patterns):
            return kind
    return "fact"
