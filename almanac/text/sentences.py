"""Sentence splitting and cue patterns shared by the offline extractor and summarizer."""

from __future__ import annotations

import re
import unicodedata

from almanac.search.text import CJK, ROLE_PREFIX  # shared with search

LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*")


_ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "st",
    "jr",
    "sr",
    "vs",
    "etc",
    "inc",
    "ltd",
    "co",
    "corp",
    "e.g",
    "i.e",
    "no",
    "fig",
    "approx",
}
_BOUNDARY = re.compile(r"[。！？!?；;]+[”’」』)]?|\.(?=\s|$)|…+|\n")


def _first_char(chars: str, body: str) -> re.Pattern:
    """`body` (case-insensitive) behind a lookahead for the characters a match can start
    with: Python's regex engine otherwise tries every alternative at every position
    (for the date pattern 24 -> 10 us per sentence, the summarizer's largest cost on text
    it has not seen before). The same matches as `body` alone (tested)."""
    return re.compile(f"(?=[{chars}])(?:{body})", re.IGNORECASE)


# Every alternative starts with a currency sign, a digit or a currency code.
AMOUNT_BODY = (
    r"(?:[$€£¥￥]\s?\d[\d,]*(?:\.\d+)?\s?(?:[kKmMbB](?:n)?\b|万|亿|千)?)"
    r"|(?:\d[\d,]*(?:\.\d+)?\s?(?:%|％|万元|亿元|元|万|亿|美元|欧元|块|USD|EUR|RMB|CNY|k\b|K\b|M\b|million|billion|thousand|dollars?|euros?))"
    r"|(?:(?:USD|EUR|RMB|CNY)\s?\d[\d,]*(?:\.\d+)?)"
)
AMOUNT = _first_char(r"$€£¥￥\duerc", AMOUNT_BODY)
IDENT = re.compile(r"\b(?=[A-Za-z0-9_/#-]*\d)[A-Za-z]{2,}[A-Za-z0-9]*(?:[-_/#][A-Za-z0-9]+)+\b|#\d{2,}\b")
# Every alternative starts with a digit, a month or day word, or one of these CJK characters.
DATE_TEXT_BODY = (
    r"\d{4}[-/.年]\s*\d{1,2}(?:[-/.月]\s*\d{1,2}\s*[日号]?)?|\d{1,2}\s*月\s*\d{1,2}\s*[日号]|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
    r"\b(?:last|next|this)\s+(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b|\b(?:yesterday|today|tomorrow)\b|"
    r"\b(?:on\s+)(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\b\d+\s+(?:days?|weeks?)\s+ago\b|"
    r"(?:上|下|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天1-7]|(?:周|星期|礼拜)[一二三四五六日天]|"
    r"昨天|前天|今天|明天|后天|\d+\s*天前|(?:Q[1-4]|[一二三四]季度)"
)
DATE_TEXT = _first_char(r"\d上下这本周星礼昨前今明后一二三四qjfmasondlty", DATE_TEXT_BODY)


# Runs of blanks that normalizing changes: any with a tab or wide space, or two or more.
# (A lone space is left alone: matching every space made this ~40% of a summary.)
_SPACES = re.compile(r"[\t\u00a0\u3000][ \t\u00a0\u3000]*| [ \t\u00a0\u3000]+")


def normalize(text: str) -> str:
    # NFC, not NFKC: NFKC would turn Chinese "，。：" into ASCII in the facts we return.
    text = unicodedata.normalize("NFC", text or "").replace("\r\n", "\n").replace("\r", "\n")
    return _SPACES.sub(" ", text)


def is_cjk(text: str) -> bool:
    cjk = len(CJK.findall(text))
    return cjk > 0 and cjk >= len(LATIN_WORD.findall(text))


def content_size(text: str) -> int:
    """A language-neutral size: CJK characters plus two per Latin word or number."""
    return len(CJK.findall(text)) + 2 * len(LATIN_WORD.findall(text))


def split_role(line: str) -> tuple[str | None, str]:
    match = ROLE_PREFIX.match(line)
    if not match:
        return None, line.strip()
    return match.group("role").lower(), line[match.end() :].strip()


def _ends_abbreviation(piece: str) -> bool:
    words = piece.rstrip(".").split()
    if not words:
        return False
    last = words[-1].lower()
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())


def split_sentences(text: str) -> list[str]:
    """Sentences in order, with their end punctuation; newlines always end a sentence."""
    sentences: list[str] = []
    pending = ""
    pos = 0
    for match in _BOUNDARY.finditer(text):
        piece = pending + text[pos : match.end()]
        pos = match.end()
        if match.group() == "." and _ends_abbreviation(piece):
            pending = piece
            continue
        pending = ""
        if piece.strip():
            sentences.append(piece.strip())
    tail = (pending + text[pos:]).strip()
    if tail:
        sentences.append(tail)
    return sentences


def turns(text: str) -> list[tuple[str | None, str]]:
    """(role, text) per non-empty line; a line without a role prefix has role None."""
    out = []
    for line in normalize(text).split("\n"):
        role, body = split_role(line)
        if body:
            out.append((role, body))
    return out


# --- Filler: acknowledgements, thanks, greetings and sign-offs (zh + en) ----------------------
# Shared by the offline extractor, the extraction's junk filter and the working window's
# summary: none of them keeps "Thanks, that's all for now." or "收到，马上处理".

_FILLER_WORDS = frozenset(
    "thanks thank you ok okay sure great good sounds sound looks look cool nice perfect awesome yes yeah yep no nope "
    "alright fine got it that this wow hi hello hey bye please welcome lol haha right indeed exactly so much very "
    "really well oh ah hmm the a is was will be all there everyone again for me".split()
)
_ZH_FILLER = re.compile(
    r"好的|谢谢|多谢|感谢|太好了|不错|明白|了解|知道|收到|没问题|可以|行|嗯|哦|哈|对|是的|好|啦|了|呀|啊|吧|的|我|你|您|们|呢|"
    r"非常|真|很|帮助|帮忙|稍等|一下|那就这样|就这样|(?:明天|回头|下次|改天)?见|再见|拜拜|晚安|辛苦|麻烦|打扰|不好意思|抱歉|"
    r"开心|高兴|"
    r"不用|算了|没事|没关系|稍后|回头|再说|想想|考虑|让"  # declines and "let me think"
)
_FILLER = re.compile(
    r"^(?:hi|hello|hey|thanks?|thank you(?: so much| very much)?|thx|ok(?:ay)?|sure|great|cool|nice|got it|"
    r"sounds good|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|yes|no|yep|nope|alright|"
    r"no problem|you'?re welcome|awesome|perfect|wow|hmm+|haha+|lol|"
    r"你好|您好|谢谢|多谢|感谢|好的|好|嗯+|哦+|收到|再见|拜拜|没问题|不客气|早上好|晚上好|下午好|对|是的|行|可以|明白|了解|哈哈+)"
    r"(?:[\s,，!！.。~～]*(?:you|there|everyone|all|大家|你|您|啦|了|呀|啊|哈)?)*[\s,，!！.。~～?？]*$",
    re.IGNORECASE,
)
# Discourse openers a fact does not need ("Oh, and btw, …", "对了，…").
LEADING_FILLER = re.compile(
    r"^(?:(?:oh|ah|well|so|and|also|btw|by the way|actually|ok(?:ay)?|yes|yeah|嗯|哦|对了|另外|还有|顺便说一下|其实|好的|你好|您好|谢谢|多谢)[\s,，、]+)+",
    re.IGNORECASE,
)


# Whole phrases that say nothing to remember: thanks, acknowledgements, agreement without
# content, promises to act, sign-offs. Read out of a sentence; what is left decides.
_FILLER_PHRASES = re.compile(
    r"\b(?:(?:thank you|thanks?)(?: a lot| so much| very much| again)?(?: for (?:all )?(?:your|the|everything)(?: help| support| time| quick reply)?)?|thx|ty|cheers|"
    r"(?:i |really |much )?appreciate(?:d)?(?: it| that| your help| the help)?|much appreciated|"
    r"that'?s (?:all|it|everything)(?: for (?:now|today|the moment))?|nothing else(?: for now)?|"
    r"(?:that |this )?(?:sounds|looks|seems) (?:good|great|fine|perfect|right|ok(?:ay)?)(?: to me)?|"
    r"(?:that |it )?works for me|(?:that |it )?makes sense|fair enough|all good|no worries|no problem|"
    r"(?:i )?will do|(?:i'?m |i am )?on it|noted|understood|got it|i see|i understand|i get it|"
    r"(?:that|this|you|it)(?:'s| is| was|'ve been| have been) (?:very |really |so |super )?(?:helpful|useful|great)|"
    r"(?:that |this )?helps(?: a lot)?|"
    r"(?:talk|speak|chat) (?:to you )?(?:later|soon|tomorrow)|see you(?: later| soon| tomorrow)?|"
    r"have a (?:good|nice|great) (?:day|one|weekend|evening|night)|take care|good ?bye|bye|"
    r"good (?:morning|afternoon|evening|night|job)|well done|nice one|"
    r"(?:best|kind|warm) regards|regards|best wishes|sincerely|you'?re welcome|"
    r"hi|hello|hey|ok(?:ay)?|sure|great|cool|nice|perfect|awesome|alright|yes|yeah|yep|right|"
    r"for now|for today)\b|"
    r"谢谢(?:你|您|大家)?(?:的)?(?:帮助|帮忙|配合|提醒|解答|支持)?|多谢|感谢(?:你|您)?(?:的)?(?:帮助|帮忙|支持)?|辛苦(?:你|您)?(?:了|啦)?|"
    r"(?:我)?(?:明白|了解|知道|清楚|懂)(?:了|啦)?|收到(?:了|啦)?|好的|好嘞|没问题|没事|不客气|"
    r"(?:马上|立刻|立即|这就|现在就?|稍后|回头|等下|一会儿?)(?:就)?(?:去)?(?:处理|办|安排|跟进|弄|改|做|看|回复|去办)?|"
    r"(?:先|就)(?:这样|这些)(?:吧|了)?|没(?:有)?(?:别的|其他)(?:问题|事)?了?|"
    r"再见|拜拜|回头聊|下次(?:再)?聊|改天(?:再)?聊|有事再(?:找|联系)(?:你|您)?|晚安|早上好|下午好|晚上好|你好|您好",
    re.IGNORECASE,
)
# What may be left of a filler sentence: particles, pronouns, intensifiers.
_FILLER_REST = frozenset(
    "so and all too again really very much just then now you everyone guys me i it that this for to".split()
)
_ZH_FILLER_REST = re.compile(r"[了啊呀吧啦哈呢的我你您们都也就很非常真太那这嗯哦噢喔对是行]")


def is_filler(sentence: str) -> bool:
    """Nothing but acknowledgements, greetings, thanks and sign-offs ("That sounds great,
    thanks!", "Thanks, that's all for now.", "好的，谢谢", "收到，马上处理")."""
    if _FILLER.match(sentence):
        return True
    words = [w.lower().strip("'’") for w in LATIN_WORD.findall(sentence)]
    cjk_left = CJK.findall(_ZH_FILLER.sub("", sentence))
    if len(cjk_left) < 2 and all(w in _FILLER_WORDS for w in words):
        return True
    rest = _FILLER_PHRASES.sub(" ", sentence.replace("’", "'"))
    if re.search(r"\d", rest):
        return False
    left = [w.lower() for w in LATIN_WORD.findall(rest)]
    return all(w in _FILLER_REST for w in left) and not CJK.findall(_ZH_FILLER_REST.sub("", rest))


# --- Who a sentence is about: names, and a pronoun that opens a sentence ---------------------

# Capitalised words that are not names when they open a sentence, and role acronyms.
_NOT_NAMES = frozenset(
    "the a an our we i my your you they their he his she her it its this that these those there here "
    "last next yesterday today tomorrow please thanks also and but so then when if after before "
    "ceo cfo cto coo vp pm hr qa po monday tuesday wednesday thursday friday saturday sunday january february "
    "march april may june july august september october november december".split()
)
_ZH_NOT_NAME = re.compile(r"^第|[周月日年天号点]|星期|礼拜")
_NAME_RUN = re.compile(r"(?<![\w'’-])[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*")
_ZH_CLIENT = re.compile(r"(?:客户|公司|供应商)[A-Z0-9]{1,3}(?![A-Za-z0-9])")
_ZH_NAME_TAGS = frozenset(("nr", "ns", "nt", "nz", "nrt", "nrfg"))


def names(sentence: str) -> list[str]:
    """The named things a sentence mentions, in order, each once ("Acme", "Maria Lopez",
    "客户C", "腾讯"); a name inside a longer one is not counted again."""
    found: list[str] = []
    for match in _NAME_RUN.finditer(sentence):
        words = match.group().split()
        while words and (words[0].lower().strip("'’s") in _NOT_NAMES or any(c.isdigit() for c in words[0])):
            words.pop(0)
        name = " ".join(w for w in words if not any(c.isdigit() for c in w))
        if name and name.lower() not in _NOT_NAMES:
            found.append(re.sub(r"['’]s$", "", name))
    found += _ZH_CLIENT.findall(sentence)
    if CJK.search(sentence):
        import rjieba  # the segmenter almanac.search uses; its POS tags mark Chinese names

        found += [
            w
            for w, tag in rjieba.tag(sentence)
            if tag in _ZH_NAME_TAGS and len(w) > 1 and CJK.match(w) and not _ZH_NOT_NAME.search(w)
        ]
    unique = list(dict.fromkeys(found))
    return [n for n in unique if not any(n != other and n in other for other in unique)]


_EN_PRONOUN = re.compile(r"^(?P<p>They|He|She|Their|His|Her)\b\s*(?P<rest>.*)$", re.S)
_ZH_PRONOUN = re.compile(r"^(?P<p>他们|她们|他|她|对方)(?P<of>的)?(?P<rest>.*)$", re.S)
_AGREE = {"are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't", "aren't": "isn't",
          "weren't": "wasn't", "haven't": "hasn't"}  # fmt: skip
_PAST_OR_S = re.compile(r"(?<!e)ed$|s$")  # "asked", "wants" stay; "need" becomes "needs"
_NO_S = frozenset(
    "will would can could should must may might did had also still just already never always".split()
)


def with_subject(sentence: str, name: str) -> str:
    """`sentence` with the pronoun that opens it replaced by `name` ("They want a 12% discount."
    → "Acme wants a 12% discount.", "他们同意打九折。" → "阿里巴巴同意打九折。"); unchanged otherwise."""
    if m := _ZH_PRONOUN.match(sentence):
        return f"{name}{m['of'] or ''}{m['rest']}"
    m = _EN_PRONOUN.match(sentence)
    if m is None or (m["p"] in ("Her", "His", "Their") and not m["rest"][:1].isalpha()):
        return sentence
    if m["p"] in ("Their", "His", "Her"):  # "Her phone" → "Maria Lopez's phone" (not "told her")
        return f"{name}'s {m['rest']}"
    rest = m["rest"]
    if m["p"] == "They":
        verb, _, tail = rest.partition(" ")
        low = verb.lower()
        if low in _AGREE:
            verb = _AGREE[low]
        elif verb.isalpha() and verb.islower() and low not in _NO_S and not _PAST_OR_S.search(low):
            verb += "es" if low.endswith(("sh", "ch", "x", "o")) else "s"
        rest = f"{verb} {tail}".rstrip() if tail else verb
    return f"{name} {rest}"
