"""Lexical folding of entity names: case, width (NFKC), punctuation and legal suffixes.

'Vercel Inc.', 'VERCEL', 'ＶＥＲＣＥＬ' all fold to 'vercel'; '华为技术有限公司' and
'华为集团' fold to '华为'. Matching is lexical on purpose: embeddings would merge
different companies with similar names.
"""

from __future__ import annotations

import re
import unicodedata

from almanac.search.text import CJK_RANGES, is_cjk, simplified

# Longest first, so '股份有限公司' is removed before '有限公司'.
_ZH_SUFFIXES = (
    "股份有限公司",
    "有限责任公司",
    "有限公司",
    "集团公司",
    "控股集团",
    "集团",
    "公司",
    "控股",
    "科技",
    "技术",
)
_LATIN_SUFFIXES = (
    "incorporated",
    "corporation",
    "company",
    "limited",
    "holdings",
    "holding",
    "group",
    "gmbh",
    "corp",
    "inc",
    "ltd",
    "llc",
    "plc",
    "co",
    "ag",
    "sa",
)
_LATIN_SUFFIX_RE = re.compile(r"(?:[\s,]+(?:" + "|".join(_LATIN_SUFFIXES) + r")\.?)+$")
# The edges of a Latin name: not inside a longer word, but right next to Chinese is an edge
# ("明天和Vercel开会"); `\w` alone counts CJK characters as word characters.
LATIN_BEFORE = rf"(?<![^\W{CJK_RANGES}])"
LATIN_AFTER = rf"(?![^\W{CJK_RANGES}])"
_PUNCT = re.compile(r"[\s\"'`.,;:!?()\[\]{}<>|/\\]+")


def normalize(text: str) -> str:
    """NFKC + casefold + traditional Chinese as simplified: the form both names and texts
    are compared in (華為 is 华为)."""
    return simplified(unicodedata.normalize("NFKC", text or "").casefold())


# A region in brackets inside a Chinese legal name: 阿里巴巴（中国）有限公司, 腾讯科技（深圳）有限公司.
_ZH_REGION = re.compile(rf"\s*\([{CJK_RANGES}]{{1,6}}\)\s*")
_ZH_LEGAL_FORMS = ("有限公司", "有限责任公司", "股份有限公司", "集团公司", "集团")


def fold(name: str) -> str:
    """The matching key of an entity name."""
    text = normalize(name).strip()
    text = text.lstrip("#@")
    if is_cjk(text) and text.endswith(_ZH_LEGAL_FORMS):
        # 阿里巴巴（中国）有限公司: the bracket in a company's legal name is where it is
        # registered. Elsewhere it names something (数据平台（一期） is not （二期）).
        text = _ZH_REGION.sub("", text)  # NFKC made the fullwidth brackets plain
    previous = None
    while previous != text:
        previous = text
        text = _LATIN_SUFFIX_RE.sub("", text).strip(" ,.")
        for suffix in _ZH_SUFFIXES:
            if text.endswith(suffix) and len(text) > len(suffix) + 1:
                text = text[: -len(suffix)].strip()
                break
    text = _PUNCT.sub(" ", text).strip()
    return text or normalize(name).strip()


def is_legal_form(text: str) -> bool:
    """Is `text` only legal-form words (公司, 集团, 有限公司…): 华为 in the segmenter's word
    华为公司 is still 华为."""
    text = text.strip()
    while text:
        suffix = next((s for s in _ZH_SUFFIXES if text.endswith(s)), None)
        if suffix is None:
            return False
        text = text[: -len(suffix)].strip()
    return True


def key_pattern(key: str) -> re.Pattern:
    """A regex finding `key` in normalized text: CJK as a substring, Latin on word edges."""
    escaped = r"[\s\"'`.,;:!?()\[\]{}<>|/\\]+".join(re.escape(part) for part in key.split(" "))
    if is_cjk(key):
        return re.compile(escaped)
    return re.compile(rf"{LATIN_BEFORE}{escaped}{LATIN_AFTER}")


def alternation(keys) -> str:
    """A regex matching any of `keys`, the longest first where several match at one place:
    the same matches as `(?:k1|k2|…)` with the keys sorted longest first, written as a trie
    (`a(?:cme(?: corp)?|irtable)`). Python's regex engine tries every alternative of a flat
    alternation at every position: with 2,000 entity names that was ~0.2 ms per task and
    grows with the names; the trie tries one branch per character."""
    trie: dict = {}
    for key in keys:
        node = trie
        for char in key:
            node = node.setdefault(char, {})
        node[""] = {}  # a key ends here

    def pattern(node: dict) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" not in node:
            return body
        # A key may also end here: try the longer ones first (greedy), then stop.
        return ("(?:" + body + ")" if len(branches) == 1 else body) + "?"

    return pattern(trie)
