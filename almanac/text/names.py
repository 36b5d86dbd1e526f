"""Who and what a sentence names: people, companies and places ("Acme", "Maria Lopez",
"客户C", "腾讯"), the capitalised words a summary must keep, ids ("PRD-2024-013", "#123"),
and a sentence's opening pronoun replaced by the name it refers to."""

from __future__ import annotations

import re

from almanac.search.text import CJK, segment

IDENT = re.compile(r"\b(?=[A-Za-z0-9_/#-]*\d)[A-Za-z]{2,}[A-Za-z0-9]*(?:[-_/#][A-Za-z0-9]+)+\b|#\d{2,}\b")

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


# A name token: a Latin word with a capital ("signed with Acme", "Alice prefers", GitHub, SOC),
# wherever it stands: a summary that drops the first word of a memory may drop its subject.
# Chinese names cannot be told from other words without NER.
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9'-]*")  # not the tail of an id: 9144MA5F


def name_tokens(text: str) -> set[str]:
    """The words of `text`'s capitalised Latin words, as the segmenter spells them."""
    found = set()
    for match in _LATIN_WORD.finditer(text):
        word = match.group()
        if any(c.isupper() for c in word):
            found.update(segment(word))
    return found
