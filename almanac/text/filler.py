"""Filler: acknowledgements, thanks, greetings and sign-offs (zh + en), and the openers
that only remind or insist. The offline extractor, the extraction's junk filter, the
working window's summary and compression's "does the summary still say it" all read it so:
none of them keeps "Thanks, that's all for now." or "收到，马上处理"."""

from __future__ import annotations

import re

from almanac.search.text import CJK
from almanac.text.normalize import LATIN_WORD

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


def without_filler(text: str) -> str:
    """`text` without what says nothing to remember: openers that only remind or insist,
    thanks, acknowledgements, greetings and sign-offs anywhere in it ("Thanks! FYI, the
    standup is at 9:30 哦" says what "the standup is at 9:30" says)."""
    rest = _FILLER_PHRASES.sub(" ", text.replace("’", "'"))
    return without_reminder(_LEADING_STOPS.sub("", rest))


_LEADING_STOPS = re.compile(r"^[\s,，!！.。:：;；、~～-]+")
