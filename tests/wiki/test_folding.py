"""The entity matcher's trie regex finds exactly what a longest-first alternation finds."""

import re

import pytest
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


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("阿里巴巴（中国）有限公司", "阿里巴巴"),
        ("阿里巴巴集团", "阿里巴巴"),
        ("腾讯科技（深圳）有限公司", "腾讯"),
        ("Alibaba Group Holding Ltd.", "alibaba"),
        ("Nightingale Holdings", "nightingale"),
    ],
)
def test_legal_forms_fold_to_the_company(name, key):
    from wiki.folding import fold

    assert fold(name) == key


@pytest.mark.parametrize(
    ("name", "key"), [("数据平台（一期）", "数据平台 一期"), ("供应链（华东）项目", "供应链 华东 项目")]
)
def test_brackets_that_name_something_stay(name, key):
    from wiki.folding import fold

    assert fold(name) == key
