"""Direct writes of memories: create (with near-duplicate check), update, delete, feedback, touch."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django_q.tasks import async_task

from almanac import keyword
from almanac.errors import ApplicationError
from almanac.models import Department, Project, UserProfile, key_part
from almanac.search import THOUSANDS, embed, segment, word_matches
from almanac.selectors import int_array, text_array, user_group_keys
from memories import conf
from memories.models import CORPUS, Feedback, Memory, MemoryLink
from memories.selectors import nearest
from memories.services.common import clean_text

SCOPE_MODELS = {"dept": Department, "project": Project}
# Nearest memories of the scope checked for a duplicate (the nearest may state another fact).
DEDUP_CANDIDATES = 3


def _my_units(user, scope: str) -> list:
    """The user's departments or projects, most recently joined first."""
    profile = UserProfile.objects.get(user=user)
    through = (UserProfile.departments if scope == "dept" else UserProfile.projects).through
    column = "department" if scope == "dept" else "project"
    rows = through.objects.filter(userprofile=profile).select_related(column).order_by("-id")
    return [getattr(r, column) for r in rows]


def scope_resolve(*, user, scope: str, scope_key: str | None) -> tuple[str, str]:
    """(scope, scope_key) for a memory `user` writes; the user must belong to that scope.

    dept/project accept the key or the display name; omitted → the user's most recent one.
    """
    profile = UserProfile.objects.select_related("tenant").filter(user=user).first()
    if profile is None:
        raise ApplicationError("user has no tenant", status_code=404)
    own = {Memory.Scope.USER: user.username, Memory.Scope.TENANT: profile.tenant.slug}
    if scope in own:
        # Only one key fits: another one is a mistake to report, not to silently replace.
        if scope_key and scope_key.strip().lower() not in {own[scope].lower(), key_part(own[scope])}:
            raise ApplicationError(
                f"scope {scope!r} is the {'acting user' if scope == Memory.Scope.USER else 'tenant'}'s own: "
                f"scope_key must be {own[scope]!r} or left out, not {scope_key!r}",
                status_code=422,
            )
        return scope, own[scope]
    if scope not in SCOPE_MODELS:
        raise ApplicationError(f"unknown scope {scope!r}", status_code=422)
    if not scope_key:
        mine = _my_units(user, scope)
        if not mine:
            raise ApplicationError(f"user belongs to no {scope}; give scope_key or use scope 'user'")
        return scope, mine[0].key
    model = SCOPE_MODELS[scope]
    unit = model.objects.filter(tenant=profile.tenant, key=key_part(scope_key)).first()
    unit = unit or model.objects.filter(tenant=profile.tenant, name__iexact=scope_key.strip()).first()
    if unit is None:
        raise ApplicationError(f"unknown {scope} {scope_key!r}")
    if unit.group_key not in user_group_keys(user):
        raise ApplicationError(f"user is not a member of {scope} {scope_key!r}", status_code=403)
    return scope, unit.key


def _check_importance(value: float) -> float:
    if value is None or not 0.0 <= float(value) <= 1.0:
        raise ApplicationError("importance must be between 0 and 1", status_code=422)
    return float(value)


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
        pre, num, mag, unit = (g.lower() if g else g for g in match.group("pre", "num", "mag", "unit"))
        if not (pre or mag or unit):
            continue
        unit = _UNITS[unit] if unit else _CURRENCIES.get(pre or "", "")
        if unit == "岁" or (unit == "year" and _AGE_AFTER.match(text, match.end())):
            unit = ""
        if unit == "折" and len(num) == 2 and num[0] in _ZH_DIGIT and num[1] in _ZH_DIGIT:
            num = f"{_ZH_DIGIT[num[0]]}.{_ZH_DIGIT[num[1]]}"  # 八五折 is 8.5折 (15% off)
        amount = _amount(num, _MAGNITUDES.get(mag or "", ""))
        facts.add(f"{amount}·{unit}" if unit else amount)
        rest.append(text[pos : match.start()])
        pos = match.end()
    rest.append(text[pos:])
    return facts, " ".join(rest)


def is_negated(text: str, tokens: list[str] | None = None) -> bool:
    """Does `text` say not (not, never, n't; 不, 没有, 未...)?"""
    tokens = segment(text) if tokens is None else tokens
    return bool(_EN_NEGATION.search(text.lower())) or any(t in _ZH_NEGATIONS for t in tokens)


def fact_signature(text: str) -> tuple[frozenset[str], bool]:
    """(the facts it states, is it negated): equal for restatements of one fact ("$3M" /
    "$3 million", "3万元" / "三万元" / "30000元", "3pm" / "3 pm", "Alice is 30" / "30 years
    old"), different for "deploys on Tuesdays" / "on Thursdays", "30k" / "40k", "3万元" /
    "3千元", "3 pm" / "3 am", "likes" / "doesn't like", "八折" / "九折", "ten" / "twelve
    thousand dollars", "next" / "last Wednesday", "下周三" / "上周三".

    Numbers with a unit or magnitude are compared by amount and unit only; the other fact
    tokens (ids, dates, bare numbers, weekdays) as the segmenter writes them, a bare Chinese
    numeral in digits."""
    text = THOUSANDS.sub("", unicodedata.normalize("NFKC", text))
    text = _ORDINAL_SUFFIX.sub(r"\1th", _EN_NUMBER_WORD.sub(_spelt_number, text))
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
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]*")


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


def memory_find_duplicate(
    *,
    tenant_id: int,
    acl_key: str,
    vector,
    exclude_id: int | None = None,
    content: str | None = None,
    memory_type: str | None = None,
    occurred_at: date | None = None,
) -> Memory | None:
    """An active memory of the same scope that says the same: cosine similarity above the
    threshold and, when `content` is given, the same facts (`fact_signature`); for an
    episodic `memory_type`, also the same `occurred_at` (the same event on another day is
    another event).

    Embeddings put "Apollo deploys on Tuesdays" and "... on Thursdays" above 0.92: without
    the fact check the second would be dropped as a duplicate of the first.
    """
    qs = Memory.objects.filter(tenant_id=tenant_id, status=Memory.Status.ACTIVE, acl__overlap=[acl_key])
    if exclude_id:
        qs = qs.exclude(pk=exclude_id)
    threshold = conf.dedup_threshold()
    close = [
        pk
        for pk, distance in nearest(qs, vector, DEDUP_CANDIDATES, tenant_id=tenant_id)
        if 1.0 - distance > threshold
    ]
    if not close:
        return None
    rows = Memory.objects.only("id", "content", "occurred_at").in_bulk(close)
    wanted = fact_signature(content) if content is not None else None
    dated = memory_type == Memory.Type.EPISODIC
    for pk in close:
        row = rows.get(pk)
        if row is None or (dated and row.occurred_at != occurred_at):
            continue
        if wanted is None or (fact_signature(row.content) == wanted and not reordered(content, row.content)):
            return Memory.objects.get(pk=pk)
    return None


def reordered(first: str, second: str) -> bool:
    """The same words in another order ("tea over coffee" / "coffee over tea", "Alice reports
    to Bob" / "Bob reports to Alice", "从阿里云迁移到腾讯云" / the reverse): another fact,
    however close the vectors."""
    a, b = segment(first), segment(second)
    if set(a) != set(b):
        return False
    return list(dict.fromkeys(a)) != list(dict.fromkeys(b))


def lock_tenant_writes(tenant_id: int) -> None:
    """Hold the tenant's memory-write lock until the transaction ends (re-entrant).

    Every write that inserts, deletes, rewrites or re-scopes memories takes it first, before
    any row lock: two identical writes sent at once cannot both miss the other's uncommitted
    row, and a delete of an original and one of its summary (which lock each other's rows
    in opposite orders) cannot deadlock. Inserts and deletes already queued on the tenant's
    corpus statistics row (held to the commit); what it adds is the wait of updates that
    change no statistics (importance, status, scope) behind them.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memories:{tenant_id}"])


@transaction.atomic
def memory_create(
    *,
    owner,
    content: str,
    memory_type: str = Memory.Type.SEMANTIC,
    scope: str = Memory.Scope.USER,
    scope_key: str | None = None,
    importance: float = 0.5,
    meta: dict | None = None,
    occurred_at: date | None = None,
    reason: str = "api",
    embedding=None,
    actor=None,
) -> tuple[Memory, Memory | None]:
    """Write a memory, or return the near-duplicate already in the same scope.

    `actor`: who writes it when that is not its owner (an admin), named in its history and
    the audit log.

    Returns `(memory, duplicate_of)`: `duplicate_of` is the existing memory (and `memory`
    is it too) when one with cosine > MEMORY_DEDUP_THRESHOLD and the same facts (numbers
    with their units, ids, dates, weekdays, negation; for an episodic memory the same
    `occurred_at`) exists in the scope.
    """
    content = clean_text(content, field="content", max_chars=conf.MAX_CONTENT_CHARS)
    if memory_type not in Memory.Type.values:
        raise ApplicationError(f"unknown memory_type {memory_type!r}", status_code=422)
    importance = _check_importance(importance)
    scope, scope_key = scope_resolve(user=owner, scope=scope, scope_key=scope_key)
    tenant_id = owner.profile.tenant_id
    acl_key = Memory.acl_key(scope, scope_key)
    vector = embedding if embedding is not None else embed([content])[0]
    lock_tenant_writes(tenant_id)
    existing = memory_find_duplicate(
        tenant_id=tenant_id,
        acl_key=acl_key,
        vector=vector,
        content=content,
        memory_type=memory_type,
        occurred_at=occurred_at,
    )
    if existing is not None:
        return existing, existing
    memory = memory_insert(
        tenant_id=tenant_id,
        owner=owner,
        scope=scope,
        scope_key=scope_key,
        memory_type=memory_type,
        content=content,
        embedding=vector,
        importance=importance,
        occurred_at=occurred_at,
        meta=meta or {},
        history_user=actor or owner,
        reason=reason,
    )
    _audit(
        action="memory.create",
        memory=memory,
        user=actor or owner,
        memory_id=memory.pk,
        detail={"reason": reason},
    )
    return memory, None


def memory_insert(*, tenant_id: int, content: str, embedding, history_user, reason: str, **fields) -> Memory:
    """Insert a checked memory row (acl from its scope), indexed for BM25, with a history reason."""
    index = keyword.index_fields(content)
    memory = Memory(
        tenant_id=tenant_id,
        content=content,
        embedding=embedding,
        acl=[Memory.acl_key(fields["scope"], fields["scope_key"])],
        **fields,
        **index,
    )
    memory._history_user = history_user
    memory._change_reason = reason
    memory.save()
    keyword.stats_apply(tenant_id=tenant_id, corpus=CORPUS, old=None, new=index)
    return memory


def can_modify(*, user, memory: Memory, perm: str) -> bool:
    return (
        memory.owner_id == user.pk
        or user.has_perm(f"memories.{perm}")
        or user.has_perm(f"memories.{perm}", memory)
    )


def _apply_content(memory: Memory, content: str) -> list[str]:
    content = clean_text(content, field="content", max_chars=conf.MAX_CONTENT_CHARS)
    if content == memory.content:
        return []
    old = {"tf": memory.tf, "doc_len": memory.doc_len}
    fields = keyword.index_fields(content)
    keyword.stats_apply(tenant_id=memory.tenant_id, corpus=CORPUS, old=old, new=fields)
    memory.content = content
    memory.embedding = embed([content])[0]
    for name, value in fields.items():
        setattr(memory, name, value)
    return ["content", "embedding", *fields]


def _apply_status(memory: Memory, status: str) -> list[str]:
    """`active` or `archived`: `compressed` belongs to compression (an original its summary
    holds; the daily job deletes those after the keep period). A compressed original set to
    another status leaves its summary (no longer linked)."""
    if status not in (Memory.Status.ACTIVE, Memory.Status.ARCHIVED):
        raise ApplicationError(
            "status may be set to 'active' or 'archived' only; 'compressed' is set by compression",
            status_code=422,
        )
    if status == memory.status:
        return []
    if memory.status == Memory.Status.COMPRESSED:
        MemoryLink.objects.filter(source_id=memory.pk, kind=MemoryLink.Kind.COMPRESSED_INTO).delete()
    memory.status = status
    return ["status"]


@transaction.atomic
def memory_update(*, memory: Memory, user, data: dict, reason: str = "api", scope_user=None) -> Memory:
    """Change content (re-embedded, re-indexed), importance, status or scope (acl recomputed).

    A new dept/project scope must be one `scope_user` (default: the acting user) belongs to;
    `user` scope is the owner's own. A summary this memory was compressed into stops saying it when its
    scope or content changes (`summaries_release`, in this transaction).
    """
    if not can_modify(user=user, memory=memory, perm="change_memory"):
        raise ApplicationError("only the owner or a governor may change this memory", status_code=403)
    lock_tenant_writes(memory.tenant_id)
    memory = (
        Memory.objects.select_related("owner").select_for_update(of=("self",)).filter(pk=memory.pk).first()
    )
    if memory is None:  # deleted while this call waited for the lock
        raise ApplicationError("memory not found", status_code=404)
    before = (memory.acl[0], memory.content)
    changed: list[str] = []
    if data.get("content") is not None:
        changed += _apply_content(memory, data["content"])
    if data.get("importance") is not None:
        memory.importance = _check_importance(data["importance"])
        changed.append("importance")
    if data.get("status") is not None:
        changed += _apply_status(memory, data["status"])
    if data.get("scope") is not None or data.get("scope_key") is not None:
        scope = data.get("scope") or memory.scope
        # `user` scope is the owner's private one, whoever moves the memory there.
        mover = memory.owner if scope == Memory.Scope.USER else (scope_user or user)
        if mover is None:
            raise ApplicationError(
                "this memory's author was deleted: it has no private scope to move to", status_code=409
            )
        scope, key = scope_resolve(user=mover, scope=scope, scope_key=data.get("scope_key"))
        if [Memory.acl_key(scope, key)] != memory.acl and (memory.meta or {}).get("source") == "compression":
            # Its text is other people's memories of this scope: moved, it would show them
            # to readers they were never written for.
            raise ApplicationError(
                "a compression summary stays in the scope of the memories it folds in; "
                "restore those and move them instead",
                status_code=409,
            )
        memory.scope, memory.scope_key, memory.acl = scope, key, [Memory.acl_key(scope, key)]
        changed += ["scope", "scope_key", "acl"]
    if data.get("meta") is not None:
        memory.meta = data["meta"]
        changed.append("meta")
    if data.get("occurred_at") is not None and data["occurred_at"] != memory.occurred_at:
        if memory.memory_type != Memory.Type.EPISODIC:
            raise ApplicationError("only an episodic memory has a date (occurred_at)", status_code=422)
        memory.occurred_at = data["occurred_at"]
        changed.append("occurred_at")
    if changed:
        memory._history_user = user
        memory._change_reason = reason
        memory.save(update_fields=[*dict.fromkeys(changed), "updated_at"])
        # Which fields, never what they say (a purge could not take it back out of here).
        fields = sorted(set(changed) - {"embedding", "tokens", "tf", "doc_len", "acl"})
        _audit(
            action="memory.update",
            memory=memory,
            user=user,
            memory_id=memory.pk,
            detail={"reason": reason, "fields": fields},
        )
    if (memory.acl[0], memory.content) != before:
        from memories.services.compression import originals_release_unsaid, summaries_release

        summaries_release(items={memory.pk: (memory.tenant_id, before[0])}, user=user, reason=reason)
        if memory.content != before[1]:  # a summary rewritten speaks only for what it still says
            originals_release_unsaid(summary=memory, user=user, reason=reason)
        memory.refresh_from_db(fields=["status"])
    return memory


PURGED = "[purged]"


def history_scrub(*, memory_id: int, reason: str) -> int:
    """A purged memory's history rows keep who changed what and when, not the text or meta."""
    return Memory.history.filter(id=memory_id).update(content=PURGED, meta={}, history_change_reason=reason)


@transaction.atomic
def memory_delete(*, memory: Memory, user, reason: str = "api") -> bool:
    """Delete a memory (owner, or `memories.delete_memory` globally or on this object);
    False when it was gone already (deleted meanwhile, e.g. with its summary).

    Its history stays (an admin can see and revert what it said); `memory_purge` removes that too.
    """
    if not can_modify(user=user, memory=memory, perm="delete_memory"):
        raise ApplicationError("only the owner or a governor may delete this memory", status_code=403)
    return memory_remove(memory=memory, user=user, reason=reason)


@transaction.atomic
def memory_remove(*, memory: Memory, user, reason: str, purge: bool = False) -> bool:
    """Delete a memory (no permission check) and audit it; False (nothing done) when it is
    gone already. A summary it was compressed into stops saying it; if it is a summary, its
    compressed originals come back (their text is theirs, not lost with it). `purge`: those
    summaries' history loses the text as well."""
    from memories.services.compression import originals_release, summaries_release

    # The tenant's write lock, then the row's: of two concurrent deletes (or purges) of one
    # memory, the second waits, then finds it gone and changes nothing (it used to subtract
    # the memory from the keyword statistics a second time).
    lock_tenant_writes(memory.tenant_id)
    if not Memory.objects.select_for_update().filter(pk=memory.pk).values_list("pk", flat=True).first():
        return False
    memory_id, items = memory.pk, {memory.pk: (memory.tenant_id, memory.acl[0])}
    originals_release(summary=memory, user=user, reason=reason)
    _remove(memory=memory, user=user, reason=reason)
    summaries_release(items=items, user=user, reason=reason, purge=purge)
    if not purge:
        _audit(
            action="memory.delete", memory=memory, user=user, memory_id=memory_id, detail={"reason": reason}
        )
    return True


@transaction.atomic
def memory_purge(*, memory: Memory, user, reason: str = "purge") -> dict:
    """Delete a sensitive memory and what still says it (DESIGN §8): its history rows keep
    who changed what and when but lose the text and meta, so do the history rows of the
    summaries that ever folded it in, skill runs that quote any text it ever had are
    redacted, and an audit event without the content records the purge. A summary's
    originals that expired (whose facts live on only in it) lose their history text too.

    Same permission as delete. The conversation turns a session memory came from are the
    session's own record and are not touched (delete the session for that).
    """
    from memories.services.compression import expired_folded
    from skills.services import skillrun_redact

    if not can_modify(user=user, memory=memory, perm="delete_memory"):
        raise ApplicationError("only the owner or a governor may purge this memory", status_code=403)
    memory_id = memory.pk
    # The tenant's write lock before anything is read: an edit or an expiry between reading
    # what to scrub and deleting would leave its text unscrubbed.
    lock_tenant_writes(memory.tenant_id)
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None:
        raise ApplicationError("memory not found (deleted meanwhile)", status_code=404)
    # 1. Every text it ever had: an edit before the purge leaves the old one in the run log
    #    (the compress run that folded it in) and in the history of its summary.
    texts = _texts_ever(memory)
    # A summary also says what its expired originals said (they live on only in it, and in
    # their own history and the compress run's input): purged with it.
    expired = expired_folded(memory.meta)
    # 2. Delete it; the summaries that fold it in now are rewritten or retired, history scrubbed.
    if not memory_remove(memory=memory, user=user, reason=reason, purge=True):
        raise ApplicationError("memory not found (deleted meanwhile)", status_code=404)
    # 3. Its own history, and that of summaries it left earlier (released by that edit).
    history = history_scrub(memory_id=memory_id, reason=reason)
    history += sum(history_scrub(memory_id=pk, reason=reason) for pk in expired)
    texts |= {text for text in expired.values() if _said(text)}
    scrubbed, summary_texts = _summaries_history_scrub(
        tenant_id=memory.tenant_id, memory_id=memory_id, texts=texts, reason=reason
    )
    # 4. The skill runs that quote any of it.
    #    A short text ("ok") would match runs that never saw this memory: not searched for.
    quoted = {text for text in texts if _specific(text)} | summary_texts
    runs = sum(skillrun_redact(contains=text, tenant=memory.tenant) for text in quoted)
    counts = {"history_rows": history + scrubbed, "skill_runs": runs}
    _audit(
        action="memory.purge",
        memory=memory,
        user=user,
        memory_id=memory_id,
        detail={"reason": reason, **counts},
    )
    return counts


# Below this (a CJK character counting 2), a text is too common to find by containment.
MIN_REDACT_WEIGHT = 8


def _specific(text: str) -> bool:
    return sum(2 if "\u3400" <= c <= "\u9fff" else 1 for c in text.strip()) >= MIN_REDACT_WEIGHT


def _said(text: str | None) -> bool:
    return bool(text and text.strip()) and text != PURGED


def _texts_ever(memory: Memory) -> set[str]:
    """The distinct contents `memory` has had: now and in its history."""
    past = Memory.history.filter(id=memory.pk).values_list("content", flat=True).distinct()
    return {text for text in [memory.content, *past] if _said(text)}


def _summaries_history_scrub(
    *, tenant_id: int, memory_id: int, texts: set[str], reason: str
) -> tuple[int, set[str]]:
    """Scrub the history rows of compression summaries that folded `memory_id` in (directly,
    or through a summary that did): the versions that list it, and their other versions
    that quote one of `texts`; returns (how many, their texts). Other summaries are not
    touched, whatever they say: a text can be another memory's words too.

    A summary keeps its meta (ids only) so that a later purge still finds what it folded in.
    """
    rows = Memory.history.filter(tenant_id=tenant_id, meta__source="compression")
    folded, frontier = set(), {memory_id}
    while frontier:  # summaries of summaries
        listing = Q()
        for pk in frontier:
            listing |= Q(meta__compressed_from__contains=[pk])
        found = set(rows.filter(listing).values_list("id", flat=True)) - folded
        folded |= found
        frontier = found
    folding = Q()
    for pk in folded | {memory_id}:
        folding |= Q(meta__compressed_from__contains=[pk])
    for text in texts:  # their other versions that still quote it (rewritten, released)
        folding |= Q(id__in=folded, content__contains=text)
    saying = rows.filter(folding).exclude(content=PURGED)
    summary_texts = {text for text in saying.values_list("content", flat=True).distinct() if _said(text)}
    return saying.update(content=PURGED, history_change_reason=reason), summary_texts


@transaction.atomic
def _remove(*, memory: Memory, user, reason: str) -> bool:
    """Delete the row and take it out of the keyword statistics, as they stand in the locked
    row; False (nothing done) when it is gone already (a concurrent removal)."""
    current = Memory.objects.select_for_update().filter(pk=memory.pk).values("tf", "doc_len").first()
    if current is None:
        return False
    keyword.stats_apply(tenant_id=memory.tenant_id, corpus=CORPUS, old=current, new=None)
    memory._history_user = user
    memory._change_reason = reason
    memory.delete()
    return True


def _audit(*, action: str, memory: Memory, user, memory_id: int, detail: dict) -> None:
    from almanac.services import audit_record

    audit_record(
        action=action,
        tenant=memory.tenant,
        actor=getattr(user, "username", "") or "job",
        object_type="memory",
        object_id=memory_id,
        detail={"owner": memory.owner_id, "scope": memory.scope, "memory_type": memory.memory_type, **detail},
    )


@transaction.atomic
def memory_set_status(*, memories, status: str, user, reason: str) -> int:
    """Archive / reactivate / mark compressed, with a history row per memory; archiving and
    reactivating are audited (compression and restores are, where they happen).

    The tenants' write locks first, as every memory write takes them: a restore, the decay
    job or an admin action locking rows against a concurrent delete (which locks a summary
    and then its originals) deadlocked without them."""
    for tenant_id in sorted(set(memories.values_list("tenant_id", flat=True))):
        lock_tenant_writes(tenant_id)
    count = 0
    for memory in memories.select_for_update(of=("self",)):
        if memory.status != status:
            action = _STATUS_ACTIONS.get((memory.status, status))
            memory.status = status
            memory._history_user = user
            memory._change_reason = reason
            memory.save(update_fields=["status", "updated_at"])
            count += 1
            if action:
                _audit(
                    action=action, memory=memory, user=user, memory_id=memory.pk, detail={"reason": reason}
                )
    return count


_STATUS_ACTIONS = {
    (Memory.Status.ACTIVE, Memory.Status.ARCHIVED): "memory.archive",
    (Memory.Status.COMPRESSED, Memory.Status.ARCHIVED): "memory.archive",
    (Memory.Status.ARCHIVED, Memory.Status.ACTIVE): "memory.reactivate",
}


@transaction.atomic
def memory_feedback(*, memory: Memory, user, signal: str) -> Feedback:
    """Move the memory's quality: adopted up, ignored/corrected down, kept within [0.2, 2.0].

    Each user's opinion counts once: the same signal again from the same user is recorded
    but moves nothing (one reader sending "ignored" over and over would otherwise bury a
    memory the whole department relies on); a changed signal replaces that user's earlier
    one (its step is undone, the new one applied), so alternating signals cannot ratchet it.
    """
    if signal not in conf.QUALITY_STEP:
        raise ApplicationError(f"unknown signal {signal!r}", status_code=422)
    memory = Memory.objects.select_for_update().filter(pk=memory.pk).first()
    if memory is None:  # deleted since the caller read it
        raise ApplicationError("memory not found", status_code=404)
    before = memory.quality
    last = Feedback.objects.filter(memory=memory, user=user).order_by("-created_at", "-id").first()
    if last is None or last.signal != signal:
        step = conf.QUALITY_STEP[signal]
        if last is not None and last.signal in conf.QUALITY_STEP:
            step /= conf.QUALITY_STEP[last.signal]
        memory.quality = round(min(conf.QUALITY_MAX, max(conf.QUALITY_MIN, before * step)), 4)
        memory._history_user = user
        memory._change_reason = f"feedback:{signal}"
        memory.save(update_fields=["quality", "updated_at"])
    return Feedback.objects.create(
        memory=memory, user=user, signal=signal, quality_before=before, quality_after=memory.quality
    )


def memory_touch(*, memory_ids: list[int], at) -> int:
    """Bump access_count/last_access (no history row: reads are not changes)."""
    return memory_touch_counts(counts={pk: (1, at) for pk in memory_ids})


def memory_touch_counts(*, counts: dict[int, tuple[int, datetime]]) -> int:
    """Add n hits and move last_access forward for many memories in one UPDATE (sorted: no deadlocks)."""
    ids = sorted(counts)
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE {Memory._meta.db_table} AS m
                SET access_count = m.access_count + u.n, last_access = GREATEST(m.last_access, u.at)
                FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS u(id, n, at)
                WHERE m.id = u.id""",
            [
                int_array(ids),
                int_array(counts[i][0] for i in ids),
                text_array(counts[i][1].isoformat() for i in ids),
            ],
        )
        return cursor.rowcount


def memory_touch_later(*, memory_ids: list[int]) -> None:
    """Count recall hits off the request path, after the reading transaction commits
    (nothing when MEMORY_TOUCH_ON_RECALL is off, or there is nothing to count)."""
    if not memory_ids or not conf.TOUCH_ON_RECALL:
        return
    now = timezone.now()
    ids = sorted(memory_ids)
    if conf.TOUCH_MODE == "buffer":
        from memories import touch

        transaction.on_commit(lambda: touch.record(ids, now))
    else:
        transaction.on_commit(lambda: async_task("memories.tasks.memory_touch_task", ids, now.isoformat()))


def memory_link(*, source: Memory, target: Memory, kind: str, meta: dict | None = None) -> MemoryLink:
    link, _ = MemoryLink.objects.get_or_create(
        source=source, target=target, kind=kind, defaults={"meta": meta or {}}
    )
    return link
