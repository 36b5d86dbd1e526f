"""Text helpers shared by the offline skills."""

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from skills.builtin import text as T


@given(st.text(alphabet=st.sampled_from([" ", "\t", "\u00a0", "\u3000", "a", "中", "\n", "\r", "é"])))
def test_normalize_collapses_every_run_of_blanks_to_one_space(value):
    expected = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    assert T.normalize(value) == re.sub(r"[ \t\u00a0\u3000]+", " ", expected)
