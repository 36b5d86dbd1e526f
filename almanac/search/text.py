"""Text as search reads it: normalization, Chinese ↔ traditional folding, segmentation
(Chinese via rjieba in search mode, Latin words lower-cased and stemmed, ids such as
`PRD-2024-013` and e-mail addresses kept whole) and the one language rule (`is_cjk`,
`detect_lang`)."""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator

_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_ID = r"[A-Za-z0-9]+(?:[-_/.:#][A-Za-z0-9]+)+"
_PROTECTED = re.compile(rf"({_EMAIL})|({_ID})")
# Han ideographs (unified, extension A, compatibility, extensions B–F): the one definition
# of "Chinese text" in Almanac. Segmentation, prompts, extraction rules, summaries and
# folding all ask it, so two language checks never disagree on one text.
CJK_RANGES = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
CJK = re.compile(rf"[{CJK_RANGES}]")
_CJK_RUN = re.compile(rf"[{CJK_RANGES}]+")


def is_cjk(text: str) -> bool:
    """True when `text` holds at least one Chinese character."""
    return bool(CJK.search(text or ""))


def detect_lang(text: str) -> str:
    """ "zh" for text with any Chinese character, else "en" (the two languages we serve)."""
    return "zh" if is_cjk(text) else "en"


# "User:", "用户：", "Assistant:" ... at the start of a line.
ROLE_PREFIX = re.compile(
    r"^\s*(?:\[[^\]\n]{1,40}\]\s*)?(?P<role>user|human|me|customer|assistant|ai|bot|system|tool|"
    r"用户|客户|我|助手|助理|机器人|系统|工具)\s*[:：]\s*",
    re.IGNORECASE,
)
NON_USER_ROLES = {"assistant", "ai", "bot", "system", "tool", "助手", "助理", "机器人", "系统", "工具"}

_WORD = re.compile(r"[^\W_]+(?:'[a-z]+)?", re.UNICODE)

EN_STOPWORDS = frozenset(
    "a an and are as at be been but by for from has have he her his i if in into is it its me my "
    "no not of on or our she so that the their them they this to was we were what when where which "
    "who will with you your do does did can could would should shall may might must am than then "
    "there these those us "
    # question words and the asking around them: "how much is the budget?" means "budget"
    "how why whom whose much many please tell".split()
)
ZH_STOPWORDS = frozenset(
    "的 了 是 在 和 与 及 或 也 就 都 而 着 吗 呢 吧 啊 哦 嗯 之 其 这 那 个 把 被 给 对 向 从 于 让 "
    # question words, pronouns and "have/for": a task's "有什么风险" means "风险"
    "有 为 什么 怎么 怎样 如何 哪些 哪个 为什么 一个 一些 我 你 他 她 它 我们 你们 他们 她们 它们 "
    # more question words and particles: "续约日期是什么时候" means "续约日期", "负责人是谁" "负责人"
    "什么时候 时候 什么样 哪 哪里 哪儿 哪天 哪位 哪年 哪家 哪种 谁 多少 几 几时 几点 几号 多久 "
    "怎么样 怎么办 啥 啥时候 是否 是不是 请问 么 嘛 呀 啦 这个 那个 这些 那些".split()
)

_jieba_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1)
def _jieba():
    import rjieba

    return rjieba


def add_words(words: Iterable[str]) -> None:
    """Teach the Chinese segmenter entity names (customers, projects, people) at run time."""
    jieba = _jieba()
    with _jieba_lock:
        for word in words:
            word = unicodedata.normalize("NFKC", word or "").strip()
            if word and is_cjk(word) and not jieba.has_word(word):
                jieba.add_word(word, 1000, None)


def word_spans(text: str) -> dict[int, int]:
    """Start → end of the segmenter's Chinese words in `text`; every other character is a
    word of its own. A name found at an offset that is no start is inside a longer word
    (华为 in 新华为人民服务 = 新华 + 为人民服务); one whose word ends later begins a longer
    word (小米 in 小米粥)."""
    spans, pos = {}, 0
    with _jieba_lock:
        words = _jieba().cut(text)
    for word in words:
        if _CJK_RUN.fullmatch(word):
            spans[pos] = pos + len(word)
        else:
            spans.update((i, i + 1) for i in range(pos, pos + len(word)))
        pos += len(word)
    return spans


def word_starts(text: str) -> set[int]:
    """Where the segmenter's words begin in `text` (see `word_spans`)."""
    return set(word_spans(text))


def word_matches(pattern: re.Pattern, text: str) -> Iterator[re.Match]:
    """The matches of `pattern` in `text` that begin a word: 前天 in 以前天天 begins inside
    以前 (以前 + 天天, "used to, every day"), 去年 in 过去年份 inside 过去."""
    starts = None
    for match in pattern.finditer(text):
        starts = word_starts(text) if starts is None else starts
        if match.start() in starts:
            yield match


def is_id(token: str) -> bool:
    return any(c.isdigit() for c in token) or "@" in token


def _latin_words(text: str) -> list[str]:
    words = [w.lower() for w in _WORD.findall(text)]
    words = [w for w in words if w not in EN_STOPWORDS]
    stem = _stemmer().stemWords
    return [w for w in stem(words) if w]


def _plain(text: str, out: list[str]) -> None:
    pos = 0
    for match in _CJK_RUN.finditer(text):
        out.extend(_latin_words(text[pos : match.start()]))
        with _jieba_lock:  # rjieba is not thread-safe: a cut during add_word raises "Already borrowed"
            cut = _jieba().cut_for_search(match.group())
        out.extend(t for t in cut if t.strip() and t not in ZH_STOPWORDS)
        pos = match.end()
    out.extend(_latin_words(text[pos:]))


# "1,200" and "1200" are one number: thousands separators go before tokenizing.
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


@functools.lru_cache(maxsize=1)
def _t2s():
    import opencc  # its dictionaries ship in the wheel: nothing is downloaded

    return opencc.OpenCC("t2s")


def simplified(text: str) -> str:
    """Traditional Chinese as simplified (華為 → 华为, 寧德時代 → 宁德时代), for matching and
    search: one company's colleagues write both. Text without CJK is returned as it is."""
    return _t2s().convert(text) if is_cjk(text) else text


def prepare(text: str) -> str:
    """The text as `segment` reads it: NFKC, no thousands separators, simplified Chinese."""
    return simplified(THOUSANDS.sub("", unicodedata.normalize("NFKC", text or "")))


def segment(text: str) -> list[str]:
    """Tokens for indexing and querying (the same function is used for both)."""
    text = prepare(text)
    out: list[str] = []
    pos = 0
    for match in _PROTECTED.finditer(text):
        token = match.group().strip(".:/#-_")
        if match.group(1) or is_id(token):
            _plain(text[pos : match.start()], out)
            out.append(token.lower())
            pos = match.end()
    _plain(text[pos:], out)
    return out
