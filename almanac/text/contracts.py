"""What a sentence of a contract states, in English and Chinese: which clauses it is
(parties, start, term, renewal, notice, fees, payment terms, termination, governing law),
the parties it names and the law it chooses. Dates, amounts and durations are read by
`almanac.text.dates`, `.amounts` and `.durations`; this module says what they are of. A
sentence of a clause not read here (liability, indemnity, warranty, confidentiality) keeps
its periods and amounts: "liability is capped at the fees paid in the last 12 months" is no
payment term.
"""

from __future__ import annotations

import re

from almanac.text.layout import width

CLAUSE_TYPES = (
    "parties",
    "start_date",
    "term",
    "renewal",
    "notice",
    "fee",
    "payment_terms",
    "termination",
    "governing_law",
)

_I = re.IGNORECASE
_START = re.compile(
    r"\beffective\s+(?:date|as\s+of|on|from)\b|\bcommenc\w*|\bstart(?:s|ing)?\s+(?:date|on)\b|"
    r"\bshall\s+(?:take\s+effect|become\s+effective)|\bbegins?\s+on\b|\bin\s+force\s+(?:from|on)\b|"
    r"生效|起始日|开始日期|开始之日|自.{0,40}?起",
    _I,
)
_TERM = re.compile(
    r"\b(?:initial\s+)?term\b|\bremain\s+in\s+(?:full\s+)?(?:force|effect)\b|\bvalid\s+(?:for|until)\b|"
    r"\bexpir(?:e|es|y|ation)\b|\bperiod\s+of\s+this\s+agreement\b|期限|有效期|届满|期满|到期|止",
    _I,
)
_RENEWAL = re.compile(r"\brenew\w*|\bextended\s+automatically\b|续约|续期|续签|续订|自动延续|顺延", _I)
_NOTICE = re.compile(r"\bnotice\b|\bnotif\w+|通知|告知", _I)
_BEFORE_END = re.compile(
    r"\b(?:before|prior\s+to|preceding)\b.{0,60}?\b(?:end|expir\w*|renewal)|"
    r"\brenew|\bexpir|届满|到期|续",
    _I,
)
_FEE = re.compile(
    r"\bfees?\b|\bprice\b|\bcharges?\b|\bconsideration\b|\bcontract\s+(?:value|price|amount|sum)\b|"
    r"\bsubscription\b|\bcompensation\b|\brent\b|\btotal\s+amount\b|"
    r"费用|服务费|许可费|价款|合同金额|合同总额|总价|总金额|租金|报酬|合同价|年费|月费",
    _I,
)
_PAYMENT = re.compile(
    r"\bpay(?:s|able|ment)?\b|\bpaid\b|\binvoice[ds]?\b|\bnet\s*\d{1,3}\b|支付|付款|结算|发票|付清", _I
)
_TERMINATION = re.compile(r"\bterminat\w*|解除|终止", _I)
# Clauses not read here: a sentence that says one of them before any word of the clauses
# above is about it, and its periods and amounts are not a term, a fee or a payment term.
_OTHER_CLAUSE = re.compile(
    r"\bliabilit(?:y|ies)\b|\bliable\b|\bindemn\w*|\bwarrant\w*|\bconfidential\w*|"
    r"\bliquidated\s+damages\b|"
    r"责任(?:上限|限额|总额)|责任[^，。；]{0,8}?(?:不超过|不得超过|为限)|赔偿|免责|保修|质保|保密|违约金",
    _I,
)
_PLACE = r"[A-Z][\w'’-]*(?:\s+(?:(?:of|and|the)\s+)*[A-Z][\w'’-]*)*"
_LAW_EN = re.compile(
    r"\bgovern(?:ed|s)?\s+by\s+(?:and\s+construed\s+in\s+accordance\s+with\s+)?(?:the\s+)?laws?\s+of\s+"
    rf"(?:the\s+)?(?P<place>{_PLACE})|\blaws?\s+of\s+(?:the\s+)?(?P<place2>{_PLACE})\s+shall\s+govern",
)
_LAW_ZH = re.compile(
    r"(?:适用|受|依据|遵守)(?P<place>[^，。；、\s]{2,20}?)(?:的)?(?:现行)?法律(?:管辖|约束|解释)?"
)
_ROLES = (
    r"甲方|乙方|丙方|出租方|出租人|承租方|承租人|买方|卖方|委托方|受托方|服务方|采购方|供应方|许可方|被许可方|"
    r"party\s+[abc]|customer|client|supplier|vendor|(?:service\s+)?provider|licensor|licensee|buyer|seller|"
    r"landlord|tenant|lessor|lessee|contractor"
)
_PARTY_LABEL = re.compile(
    rf"^\s*(?:{_ROLES})\s*(?:[（(][^）)]{{0,20}}[)）])?\s*[：:]\s*(?P<name>[^\n，。；;,]{{2,80}}?)\s*$",
    _I | re.MULTILINE,
)
_BETWEEN = re.compile(
    r"\bbetween\s+(?P<a>[A-Z0-9][^()]{1,80}?)\s*(?:\([^)]{0,60}\)\s*)?,?\s+and\s+(?P<b>[A-Z0-9][^()]{1,80}?)"
    r"\s*(?:\(|,|;|\.?\s*$|\.\s+(?=[A-Z][a-z]))"
)
_ZH_BETWEEN = re.compile(
    r"(?:由|经)?(?:甲方)?(?P<a>[^\s，。；、（(]{2,40}?(?:公司|集团|大学|研究院|中心|事务所|银行))"
    r"(?:（[^）]{0,20}）)?\s*(?:与|和|同)\s*(?:乙方)?(?P<b>[^\s，。；、（(]{2,40}?(?:公司|集团|大学|研究院|中心|事务所|银行))"
)
_YEARLY = re.compile(
    r"\bannual(?:ly)?\b|\bper\s+(?:year|annum)\b|\byearly\b|\beach\s+year\b|年费|年度|每年|每一年", _I
)
_MONTHLY = re.compile(r"\bmonthly\b|\bper\s+month\b|\beach\s+month\b|月费|每月|每个月", _I)
_CUES = (
    ("start_date", _START),
    ("term", _TERM),
    ("renewal", _RENEWAL),
    ("notice", _NOTICE),
    ("fee", _FEE),
    ("payment_terms", _PAYMENT),
    ("termination", _TERMINATION),
)
# Narrower lines are headings ("8. Termination", "第八条 合同解除"), not clauses (a Chinese
# character is two wide: `almanac.text.layout.width`).
MIN_CLAUSE_WIDTH = 24


def _cues(sentence: str) -> dict[str, int]:
    """Each clause `sentence` may state, and where it first says so."""
    cues = {}
    for kind, pattern in _CUES:
        if match := pattern.search(sentence):
            cues[kind] = match.start()
    if "notice" in cues and not _BEFORE_END.search(sentence):
        del cues["notice"]
    return cues


def clause_types(sentence: str) -> list[str]:
    """The clauses `sentence` may state, by what it says (its values are checked by the
    caller: a fee needs an amount, a notice a duration). A clause said after a word of
    another clause (liability, indemnity, warranty, confidentiality) is that clause's."""
    if width(sentence.strip()) < MIN_CLAUSE_WIDTH:
        return []
    other = _OTHER_CLAUSE.search(sentence)
    found = [kind for kind, at in _cues(sentence).items() if other is None or at < other.start()]
    if governing_law(sentence):
        found.append("governing_law")
    return found


def governing_law(sentence: str) -> str | None:
    """The law a sentence chooses ("England and Wales", "中华人民共和国"), or None."""
    if match := _LAW_EN.search(sentence):
        return (match["place"] or match["place2"]).strip()
    if "法律" in sentence and re.search(r"适用|管辖|约束", sentence) and (match := _LAW_ZH.search(sentence)):
        return match["place"].strip()
    return None


def _clean_party(name: str) -> str:
    name = re.sub(r"^(?:the\s+)?", "", name.strip(" \t,;:“”\"'"), flags=_I)
    return re.sub(r"^(?:本(?:合同|协议))?(?:由|经)", "", name).strip()


def parties(text: str) -> list[str]:
    """The parties a contract names: labelled lines ("甲方：…", "Customer: …") first, else
    "between A and B" / "A与B"; in order, each once."""
    names = [_clean_party(m["name"]) for m in _PARTY_LABEL.finditer(text)]
    if len(names) < 2:
        match = _BETWEEN.search(text) or _ZH_BETWEEN.search(text)
        if match:
            names += [_clean_party(match["a"]), _clean_party(match["b"])]
    return list(dict.fromkeys(n for n in names if n))


def recurring_period(sentence: str) -> str:
    """ "year" or "month" when the sentence says its amount recurs ("an annual fee of",
    "每月服务费"), else ""."""
    if _YEARLY.search(sentence):
        return "year"
    if _MONTHLY.search(sentence):
        return "month"
    return ""


def notice_word_at(sentence: str) -> int | None:
    """Where a sentence says "notice" (to pick, of its durations, the notice period)."""
    match = _NOTICE.search(sentence)
    return match.start() if match else None


def renewal_words(sentence: str) -> list[int]:
    """Where each word of renewal ends ("renews", "续期"): the renewed term is said after one."""
    return [match.end() for match in _RENEWAL.finditer(sentence)]
