"""The one sentence splitter (almanac.text.sentences), zh and en."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from almanac.text.sentences import sentence_ends, split_sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Mr. Smith paid $3.5 million. Then he left!", ["Mr. Smith paid $3.5 million.", "Then he left!"]),
        ("We use e.g. Slack. Done", ["We use e.g. Slack.", "Done"]),
        ("客户C合同金额30万元。下周三签约！好的", ["客户C合同金额30万元。", "下周三签约！", "好的"]),
        ("他说：“好的。”然后走了", ["他说：“好的。”", "然后走了"]),
        ("line one\nline two", ["line one", "line two"]),
        ("Wait… what?! ok", ["Wait…", "what?!", "ok"]),
    ],
)
def test_examples(text, sentences):
    assert split_sentences(text) == sentences


PIECES = [
    "Hello", " world", ".", " ", "Mr.", " Smith", "3.5", "e.g.", "!", "?", "\n", "…", "客户", "合同",
    "30万元", "。", "！", "？", "；", "；", ";", "”", "Q3 2027", "$1.2 billion", "Dr.", " U.S.", "a", "\t",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join) | st.text(max_size=60)


def _bare(text: str) -> str:
    return re.sub(r"\s+", "", text)


@given(texts)
def test_splitting_then_joining_loses_nothing_but_blanks(text):
    assert _bare("".join(split_sentences(text))) == _bare(text)


@given(texts)
def test_no_sentence_is_empty_and_each_is_stripped(text):
    assert all(s and s == s.strip() for s in split_sentences(text))


@given(texts)
def test_the_chunker_cuts_where_the_splitter_splits(text):
    ends = sentence_ends(text)
    pieces = [text[a:b].strip() for a, b in zip([0, *ends], [*ends, len(text)], strict=True)]
    assert [p for p in pieces if p] == split_sentences(text)


@given(texts)
def test_a_decimal_point_never_ends_a_sentence(text):
    for sentence in split_sentences(text + " 3.5 units"):
        assert not sentence.endswith("3.")
