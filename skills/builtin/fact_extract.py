"""`fact_extract`: preferences, events, facts and decisions from a conversation or text."""

from __future__ import annotations

import json
import re

from almanac.search.text import CJK, NON_USER_ROLES
from almanac.text.amounts import mentions as amount_mentions
from almanac.text.claims import PREFERENCE, claim, key_normalize
from almanac.text.dates import RECURRING, dated_text, find_date, parse_iso
from almanac.text.filler import LEADING_FILLER, is_filler
from almanac.text.names import IDENT, names, with_subject
from almanac.text.normalize import LATIN_WORD, is_cjk
from almanac.text.sentences import split_sentences, turns
from skills.registry import BaseSkill, register

FACT_TYPES = ("preference", "event", "fact", "decision")
MAX_TEXT = 500_000

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "maxLength": MAX_TEXT},
        "session_date": {"type": ["string", "null"], "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "lang": {"type": ["string", "null"], "maxLength": 16},  # "zh", "en"; others mean auto
        # The text just before `text` (a chunk's overlap): read for references, not extracted.
        "context": {"type": ["string", "null"], "maxLength": MAX_TEXT},
    },
    "required": ["text"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1},
                    "type": {"enum": list(FACT_TYPES)},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                    "occurred_at": {"type": ["string", "null"], "pattern": r"^\d{4}-\d{2}-\d{2}$"},
                    "kind": {"enum": ["preference"]},  # a standing wish or rule ("以后…都…", "from now on…")
                    # What it states one value of (subject + attribute), as memories store it
                    # (almanac.text.claims): a newer value of the same key supersedes it.
                    "key": {"type": "string", "minLength": 1, "maxLength": 200},
                },
                "required": ["text", "type", "importance", "occurred_at"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}

PROMPT = """You extract durable memories from a conversation between a user and an assistant.
Return every preference, event, fact and decision worth remembering about the user, their
work, team, project or company. Rules:
- Each item is ONE self-contained sentence that makes sense without the conversation:
  resolve "it", "that", "he/she", "他/她/它/这个" to the names they refer to.
- KEEP first-person markers exactly as the user would say them ("I ...", "我...",
  "our team ...", "我们项目组..."): downstream code uses them to decide who the memory is about.
- Write each sentence in the language the user used.
- type: "preference" (likes, dislikes, habits, wants), "event" (something that happened
  or is scheduled, with a date when known), "fact" (a stable statement), "decision"
  (something decided or agreed).
- importance: 0..1 (0.9+ for contracts, budgets, amounts, deadlines, "always/never/must").
- occurred_at: "YYYY-MM-DD" for events and dated decisions when the date is known
  (resolve relative dates such as "last Friday" / "上周五" against the session date),
  otherwise null; write the resolved date into the sentence too ("上周五（2025-03-14）…").
- kind: "preference" for a standing wish or rule ("以后报销都走电子流程", "from now on, always
  …", "I prefer …"); leave it out otherwise.
- key: when the item states ONE value of one thing (an amount, a date, an owner, a status,
  a preference), name that thing as "subject.attribute" ("客户C.合同金额", "Apollo.owner",
  "me.seat"), the same every time that thing is mentioned; leave it out otherwise.
- "Context" is earlier conversation: use it to resolve references, extract nothing from it.
- Skip greetings, thanks, small talk, questions and what the assistant said.
Reply with JSON only, no prose: {"facts": [{"text": "...", "type": "...", "importance": 0.0, "occurred_at": null}]}

Example (session date 2025-03-20):
我喜欢靠窗的座位。上周五我们和 Acme 开会，确定合同金额 30 万元。Thanks!
{"facts": [{"text": "我喜欢靠窗的座位。", "type": "preference", "importance": 0.6, "occurred_at": null, "kind": "preference", "key": "我.座位"},
 {"text": "上周五（2025-03-14）我们和 Acme 开会，确定合同金额为 30 万元。", "type": "event", "importance": 0.9, "occurred_at": "2025-03-14"}]}"""

# --- Offline, rule-based ---------------------------------------------------------------

_PREFERENCE = re.compile(
    r"\b(?:prefer(?:s|red)?|preference|can't stand|cannot stand|would rather|'d rather|favou?rite|"
    r"allergic|vegetarian|vegan|tend to|habit)\b|"
    r"\b(?:i|we|he|she|they|(?-i:[A-Z][a-z]+))\s+(?:really\s+|also\s+|just\s+|don't\s+|do not\s+|doesn't\s+|never\s+)?"
    r"(?:like|likes|love|loves|hate|hates|enjoy|enjoys|dislike|dislikes)\b|"
    r"\b(?:always|never|usually|generally|normally)\s+(?:want|use|ask|drink|eat|take|go|write|read|work|reply|answer)|"
    r"喜欢|讨厌|偏好|习惯|更爱|爱吃|不吃|最爱|倾向|宁愿|宁可|受不了|过敏|素食|口味|爱喝|不喝|希望|"
    r"(?:总是|一般|通常|从不|从来不|向来)(?:用|喝|吃|要|写|看|坐|选|去)",
    re.IGNORECASE,
)
_NOT_PREFERENCE = re.compile(
    r"\b(?:looks?|sounds?|seems?|feels?) like\b|\b(?:would|'d) like to\b", re.IGNORECASE
)
_IDENTITY = re.compile(
    r"^(?:我叫|我是|我姓|我的名字(?:是|叫)|my name is|i am called|i'm called|call me)\s*\S", re.IGNORECASE
)
_IDENTITY_NAME = re.compile(
    r"^(?:[Ii]'m|[Ii] am)\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?\.?$"
)  # "I'm Bob.", not "I'm tired."
_DECISION = re.compile(
    r"\b(?:decided|decide to|decision|agreed to|agreed on|settled on|resolved to|final call)\b|决定|敲定|拍板|决议|商定|最终选|定下来",
    re.IGNORECASE,
)
_WEAK_DECISION = re.compile(
    r"\b(?:agreed|chose|chosen|approved|signed off|go with|going with|will go with|we will use|finali[sz]ed)\b|(?<![不没未])确定|定了|(?<![不没未])同意|批准|选定",
    re.IGNORECASE,
)
_EVENT = re.compile(
    r"\b(?:meeting|meet|met|call with|called|happened|launch(?:ed|es)?|release[ds]?|shipped|went live|go live|"
    r"visited|travel(?:l?ed)?|flew|attended|presented|demo(?:ed)?|held|kick-?off|workshop|conference|"
    r"interview(?:ed)?|signed|deployed|moved to|joined|started|finished|completed)\b|"
    r"开会|会议|上线|发布|见了|拜访|出差|参加|举行|举办|发生|签约|签了|演示|召开|交付|到访|入职|离职|见面|面试|部署|完成|启动",
    re.IGNORECASE,
)
_HIGH = re.compile(
    r"\b(?:always|never|must|deadline|due|contract|budget|price|pricing|amount|critical|urgent|important|"
    r"allergic|required?|mandatory|asap)\b|合同|预算|金额|截止|必须|一定|务必|永远|从不|绝不|重要|紧急|价格|报价|过敏|底线",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|how|why|when|where|who|whom|which|can you|could you|would you|will you|do you|does|did you|"
    r"is there|are there|is it|are you|should i|shall we|may i|"
    r"(?:do|did|have|had|should|can|could|would|will|are|were) we|has anyone|does anyone|did anyone|"
    r"is anyone|do i|did i|have i|"
    # an auxiliary, then its subject: "Is the budget enough", "Was Wang Wei there"; not a
    # diary line without a subject ("Was in Berlin", "Could not reach them", "Did the migration")
    r"(?:is|are|was|were|can|could|should|would|will)\s+(?:the|a|an|this|that|these|those|it|he|she|they|you|"
    r"there|anyone|someone|everyone|our|your|their|his|her|my|(?-i:[A-Z][a-z]+))|"
    # "Did Acme sign", "Has it been approved", "Shall I send" (not "Did the migration", a diary line)
    r"(?:did|does|has|have|had|shall)\s+(?:i|it|he|she|they|you|we|anyone|someone|everyone|(?-i:[A-Z][a-z]+)))\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:please |pls |can you |could you |would you |help me |let me |let's see|"
    r"帮我|请帮|请你|麻烦你|你能|能不能|可以帮|给我)|"
    r"^(?:book|schedule|send|write|draft|find|show|tell|give|make|create|summari[sz]e|translate|check|remind|"
    r"list|explain|search|look up|calculate|generate|fix|review)\b",
    re.IGNORECASE,
)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|fyi|for the record)(?:\s+that)?[\s,:：]+|^(?:请)?(?:记住|记一下|记下|备注)[\s,，:：]*",
    re.IGNORECASE,
)

# Asked, not said: "我们是否已经签约", "有没有人知道预算", "我们签了合同没有", "能否下周三交付",
# "请问报价是多少", "签合同了没", A-not-A ("来不来", "要不要", "可以不可以"), question words
# ("谁负责", "什么时候付款", "哪个版本", "几点开会") but not their indefinite uses ("谁都知道",
# "什么都行", "没什么问题", "苹果什么的", "哪怕", "或多或少", "多少有点").
_ZH_QUESTION = re.compile(
    r"是否|有没有|能否|可否|请问|(?:了|过)[^，。,；;！!]{0,20}没有?$|(?:吗|呢|是不是|对不对|好不好)$"
)
_ZH_ASKING = re.compile(
    r"([\u4e00-\u9fff]{1,2})不\1|"
    r"什么(?![都也的])|(?<!或)多少(?!有点|有些)|谁(?![都也])|哪(?!怕)|几点|几号|[周期拜]几"
)
# Their indefinite uses, read out before asking: "没有什么问题", "不需要什么审批", "不管谁负责".
_ZH_INDEFINITE = re.compile(r"(?:没有?|不需要|不用|没啥|并没有)什么|(?:不管|无论|不论)[^，,。；;]*")
# ... unless it is reported, not asked: "不确定Acme会不会续约", "我不知道谁负责".
_ZH_EMBEDDED = re.compile(r"不确定|不知道|不清楚|看看|问问|确认|取决于|决定|商量")
# Supposed, not said: "If we sign, the discount would be 15%", "如果我们签约，折扣是15%".
_HYPOTHETICAL = re.compile(
    r"^(?:if|suppose|supposing|assuming|in case|what if|imagine|unless)\b|\bif\b.*\bwould\b|\bwould\b.*\bif\b|"
    r"如果|假如|假设|倘若|万一|若是|^要是",
    re.IGNORECASE,
)


def _is_question(sentence: str) -> bool:
    bare = sentence.rstrip(" .。!！~")
    if bare.endswith(("?", "？")) or _ZH_QUESTION.search(bare):
        return True
    if _ZH_ASKING.search(_ZH_INDEFINITE.sub("", bare)) and not _ZH_EMBEDDED.search(bare):
        return True
    return bool(_QUESTION_START.match(sentence)) and not sentence.endswith((".", "。"))


def _clean(sentence: str) -> str:
    sentence = LEADING_FILLER.sub("", sentence.strip())
    sentence = _REMEMBER.sub("", sentence)
    return sentence.strip(" ,，、;；:：-")


def _size(sentence: str) -> int:
    """Two per CJK character and two per Latin word or number: "我住在上海" (10) weighs about
    what "I live in Shanghai" (8) does. (`content_size` counts a CJK character as one, which
    dropped short Chinese facts that their English translations passed.)"""
    return 2 * len(CJK.findall(sentence)) + 2 * len(LATIN_WORD.findall(sentence))


def _classify(sentence: str, date) -> str | None:
    size = _size(sentence)
    if _IDENTITY.match(sentence) or _IDENTITY_NAME.match(sentence):
        return "fact"
    if size < 5:
        return None
    # "我一周三次健身", "We meet every Monday": a habit or routine, not a dated event
    event_cue = bool(_EVENT.search(sentence)) and not RECURRING.search(sentence)
    if PREFERENCE.search(sentence):
        return "preference"
    if _DECISION.search(sentence):
        return "decision"
    if date and event_cue:
        return "event"  # "上周五开会，确定了金额": the meeting is the memory, dated
    if _WEAK_DECISION.search(sentence):
        return "decision"
    if _PREFERENCE.search(sentence) and not _NOT_PREFERENCE.search(sentence):
        return "preference"
    if (date or event_cue) and size >= 6:
        return "event"
    if size >= 8 or re.search(r"\d", sentence):  # "预算5万。", "Budget: 50k." keep their amount
        return "fact"
    return None


def _importance(kind: str, sentence: str) -> float:
    score = {"preference": 0.6, "decision": 0.7, "event": 0.5, "fact": 0.4}[kind]
    if _HIGH.search(sentence):
        score += 0.2
    if amount_mentions(sentence) or IDENT.search(sentence):
        score += 0.1
    return round(min(score, 1.0), 2)


def _finish(sentence: str) -> str:
    if sentence[:1].isalpha() and sentence[:1].islower():
        sentence = sentence[0].upper() + sentence[1:]
    if sentence[-1:] not in ".。!！":
        sentence += "。" if is_cjk(sentence) else "."
    return sentence


def _fact_of(raw: str, session_date, subject: str | None = None) -> dict | None:
    if is_filler(raw) or _is_question(raw) or _HYPOTHETICAL.search(raw):
        return None
    sentence = _clean(raw)
    if not sentence or is_filler(sentence):
        return None
    if _REQUEST.match(sentence) and not (_PREFERENCE.search(sentence) or PREFERENCE.search(sentence)):
        return None  # a request to the assistant, not something about the user
    if subject:
        sentence = with_subject(sentence, subject)
    date = find_date(sentence, session_date)
    kind = _classify(sentence, date)
    if kind is None:
        return None
    sentence = _finish(sentence)
    if kind == "event" and date is None:
        date = find_date(sentence, session_date, periods=True)  # "we shipped it last month"
    dated = kind in ("event", "decision") and date is not None
    fact = {
        "text": dated_text(sentence, date) if dated else sentence,
        "type": kind,
        "importance": _importance(kind, sentence),
        "occurred_at": date.isoformat() if dated else None,
    }
    if kind == "preference":
        fact["kind"] = "preference"
    return _keyed(fact)


def _keyed(fact: dict) -> dict:
    """`fact` with the key of the one value it states (`claim`), as memories store it; an
    event has none (it happens again, it is not replaced)."""
    found = claim(fact["text"]) if fact["type"] != "event" else None
    if found is not None and found.key:
        fact["key"] = found.key
    return fact


def _subject_of(sentence: str, previous: str | None) -> str | None:
    """Who the next sentence's pronoun refers to: the one name of this sentence; none when it
    names several (ambiguous) or none, unless a pronoun opens it ("Acme called. They want X.
    They also asked for Y.": both are Acme)."""
    found = names(sentence)
    if found:
        return found[0] if len(found) == 1 else None
    return previous if with_subject(sentence, "X") != sentence else None


def extract_offline(text: str, session_date=None, context: str = "") -> list[dict]:
    """Deterministic facts: split, drop non-user turns/questions/filler, classify by cues.
    `context` (the text before, a chunk's overlap) is read for who "they"/"他们" are, never
    extracted."""
    facts, seen = [], set()
    subject = None
    for raw in (
        raw for role, body in turns(context) if role not in NON_USER_ROLES for raw in split_sentences(body)
    ):
        subject = _subject_of(raw, subject)
    for role, body in turns(text):
        if role in NON_USER_ROLES:
            continue
        for raw in split_sentences(body):
            fact = _fact_of(raw, session_date, subject)
            subject = _subject_of(raw, subject)
            if fact and fact["text"].lower() not in seen:
                seen.add(fact["text"].lower())
                facts.append(fact)
    return facts


# --- The skill -------------------------------------------------------------------------

_TYPE_ALIASES = {
    "preferences": "preference",
    "pref": "preference",
    "events": "event",
    "facts": "fact",
    "decisions": "decision",
    "偏好": "preference",
    "事件": "event",
    "事实": "fact",
    "决定": "decision",
}


_WORD_IMPORTANCE = {"high": 0.8, "medium": 0.5, "low": 0.3, "高": 0.8, "中": 0.5, "低": 0.3}


def _importance_of(value) -> float:
    """0..1 from what models write: 0.8, "0.8", 8 (of 10), 80, "80%", "high"."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _WORD_IMPORTANCE:
            return _WORD_IMPORTANCE[word]
        value = word.rstrip("%")
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.5
    if 1 < number <= 10:
        number /= 10  # a 1-10 scale
    elif 10 < number <= 100:
        number /= 100  # a percentage
    return round(min(max(number, 0.0), 1.0), 2)


def _date_of(value, text: str, kind: str, base) -> str | None:
    """An ISO date; "last Friday" / "上周五" are resolved against the session date; an event
    without one gets the date its sentence mentions."""
    when = parse_iso(value)
    if when is None and isinstance(value, str) and value.strip():
        when = find_date(value, base, periods=True)
    if when is None and kind == "event":
        when = find_date(text, base, periods=True)
    return when.isoformat() if when else None


def _normalize_fact(item, base=None) -> dict | None:
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict):
        return None
    text = item.get("text") or item.get("fact") or item.get("content") or ""
    if not isinstance(text, str) or not text.strip():
        return None
    kind = str(item.get("type") or "fact").strip().lower()
    kind = _TYPE_ALIASES.get(kind, kind if kind in FACT_TYPES else "fact")
    fact = {
        "text": text.strip(),
        "type": kind,
        "importance": _importance_of(item.get("importance", 0.5)),
        "occurred_at": _date_of(item.get("occurred_at") or item.get("date"), text, kind, base),
    }
    # The model's name for the thing, spelt as the offline path spells keys ("客户C.合同金额"
    # and "客户C合同金额30万元" meet at "c 合同 客户 金额").
    key = key_normalize(item["key"]) if isinstance(item.get("key"), str) else ""
    if key and kind != "event":
        fact["key"] = key
    return fact


@register
class FactExtract(BaseSkill):
    name = "fact_extract"
    version = "1.0"
    description = "Preferences, events, facts and decisions as self-contained sentences (JSON facts)."
    input_schema = INPUT_SCHEMA
    output_schema = OUTPUT_SCHEMA
    max_output_tokens = 4096

    def messages(self, input: dict) -> list[dict]:
        context = {"session_date": input.get("session_date"), "lang": input.get("lang")}
        before = (
            f"Context (earlier, extract nothing from it):\n{input['context']}\n\n"
            if input.get("context")
            else ""
        )
        user = f"Session context: {json.dumps(context, ensure_ascii=False)}\n\n{before}Conversation:\n{input['text']}"
        return [{"role": "system", "content": PROMPT}, {"role": "user", "content": user}]

    def normalize(self, input: dict, data):
        if isinstance(data, list):
            data = {"facts": data}
        if isinstance(data, dict) and "facts" not in data and len(data) == 1:
            # {"result": {"facts": [...]}} or {"memories": [...]}: one wrapper too many or a synonym
            inner = next(iter(data.values()))
            data = inner if isinstance(inner, dict) and "facts" in inner else {"facts": inner}
        if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
            return data  # let the schema explain what is wrong
        base = parse_iso(input.get("session_date"))
        facts = [_normalize_fact(item, base) for item in data["facts"]]
        return {"facts": [f for f in facts if f]}

    def run_llm(self, input: dict, client) -> dict:
        output = super().run_llm(input, client)
        if client.truncated and output["facts"]:
            # The reply hit max_tokens and was repaired: its last fact is probably cut short.
            output = {"facts": output["facts"][:-1]}
        return output

    def run_offline(self, input: dict) -> dict:
        base = parse_iso(input.get("session_date"))
        return {"facts": extract_offline(input["text"], base, context=input.get("context") or "")}
