"""The patterns of almanac.text: blanks normalized, and the date mention pattern's
first-character lookahead."""

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from almanac.text.dates import DATE_TEXT, DATE_TEXT_BODY
from almanac.text.normalize import normalize


@given(st.text(alphabet=st.sampled_from([" ", "\t", "\u00a0", "\u3000", "a", "中", "\n", "\r", "é"])))
def test_normalize_collapses_every_run_of_blanks_to_one_space(value):
    expected = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    assert normalize(value) == re.sub(r"[ \t\u00a0\u3000]+", " ", expected)


# Pieces of dates and amounts, in both languages and both cases, to build texts from.
PIECES = [
    "2024", "-", "/", "03", "7", "年", "月", "日", "号", " ", "Mar", "march", "JAN", "sept", "3rd",
    "next", "Last", "this", "fri", "Monday", "on ", "today", "Tomorrow", "days", "weeks ago", "ago",
    "上", "下个", "这", "本", "周", "星期", "礼拜", "一", "天", "昨天", "后天", "天前", "Q3", "q1",
    "三季度", "$", "€", "¥", "1,200", ".5", "k", "M", "bn", "万", "亿元", "%", "USD", "rmb", "eur",
    "million", "dollars", "cny", "CNY ", "x", "中", "١٢",
]  # fmt: skip
pieces_text = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@given(pieces_text | st.text(max_size=30))
def test_first_char_lookahead_finds_what_the_bare_patterns_find(text):
    assert DATE_TEXT.findall(text) == re.findall(DATE_TEXT_BODY, text, re.IGNORECASE)
