"""Lexical folding of entity names: case, width (NFKC), punctuation and legal suffixes.

'Vercel Inc.', 'VERCEL', 'ＶＥＲＣＥＬ' all fold to 'vercel'; '华为技术有限公司' and
'华为集团' fold to '华为'. Matching is lexical on purpose: embeddings would merge
different companies with similar names.
"""

from __future__ import annotations

import re
import unicodedata

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
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_PUNCT = re.compile(r"[\s\"'`.,;:!?()\[\]{}<>|/\\]+")


def normalize(text: str) -> str:
    """NFKC + casefold: the form both names and texts are compared in."""
    return unicodedata.normalize("NFKC", text or "").casefold()


def fold(name: str) -> str:
    """The matching key of an entity name."""
    text = normalize(name).strip()
    text = text.lstrip("#@")
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


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))


def key_pattern(key: str) -> re.Pattern:
    """A regex finding `key` in normalized text: CJK as a substring, Latin on word edges."""
    escaped = r"[\s\"'`.,;:!?()\[\]{}<>|/\\]+".join(re.escape(part) for part in key.split(" "))
    if has_cjk(key):
        return re.compile(escaped)
    return re.compile(rf"(?<![\w]){escaped}(?![\w])")
