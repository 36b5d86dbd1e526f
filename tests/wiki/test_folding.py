"""The entity matcher's trie regex finds exactly what a longest-first alternation finds."""

import re

from hypothesis import given
from hypothesis import strategies as st

from wiki.folding import alternation

# A small alphabet, so keys share prefixes and overlap in the text; regex metacharacters
# and CJK included.
ALPHABET = "ab .*(|华为-"
keys = st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=6), min_size=1, max_size=12)
texts = st.text(alphabet=ALPHABET + "c", max_size=40)


def reference(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


@given(words=keys, text=texts)
def test_trie_matches_like_the_longest_first_alternation(words, text):
    for wrap in ("(?:{})", r"(?<!\w)(?:{})(?!\w)"):  # as CJK keys, and as Latin ones on word boundaries
        expected = [(m.span(), m.group()) for m in re.finditer(wrap.format(reference(words)), text)]
        found = [(m.span(), m.group()) for m in re.finditer(wrap.format(alternation(words)), text)]
        assert found == expected


def test_shared_prefixes_become_one_branch():
    assert alternation(["acme", "acme corp", "airtable"]) == r"a(?:cme(?:\ corp)?|irtable)"
