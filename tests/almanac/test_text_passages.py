"""The passage that answers a query, its words marked (almanac.text.passages), zh and en."""

from hypothesis import given
from hypothesis import strategies as st

from almanac.text.passages import best_passage, query_terms, term_spans

PAGE = (
    "[2026-10-01] bob: Vercel asked about pricing.\n"
    "[2026-11-03] alice: Vercel renewal date is 2027-01-31; they renewed last year on the same terms.\n"
    "[2026-11-04] 王伟: Vercel 的续约日期定在 2027 年 1 月 31 日。\n"
    "[2026-11-05] 王伟: 技术对接会在周五举行。"
)


def _marked(passage):
    return [text for text, marked in passage.pieces() if marked]


def test_an_english_question_finds_its_sentence_and_marks_stems():
    passage = best_passage(PAGE, query_terms("When is the renewal date of Vercel?", ignore=["Vercel"]))
    assert passage.text.startswith("[2026-11-03] alice: Vercel renewal date")
    assert _marked(passage) == ["renewal", "date", "renewed"]
    assert passage.before and passage.after


def test_a_chinese_question_finds_its_sentence_without_its_question_words():
    terms = query_terms("Vercel 续约日期是什么时候", ignore=["Vercel"])
    assert "vercel" not in terms and "什么" not in terms
    passage = best_passage(PAGE, terms)
    assert passage.text == "[2026-11-04] 王伟: Vercel 的续约日期定在 2027 年 1 月 31 日。"
    assert "".join(_marked(passage)) == "续约日期"


def test_traditional_characters_match_simplified_text():
    passage = best_passage(PAGE, query_terms("續約日期"))
    assert "".join(_marked(passage)) == "续约日期"


def test_an_id_is_marked_whole_and_case_aside():
    spans = term_spans("See prd-2024-013 and PRD-2024-013.", query_terms("PRD-2024-013"))
    assert [(s, e) for s, e, _ in spans] == [(4, 16), (21, 33)]


def test_without_a_matching_word_the_passage_is_the_start_cut_to_width():
    passage = best_passage("x" * 500, ["nothing"], width=100)
    assert passage.text == "x" * 100 and passage.terms == 0 and passage.after and not passage.before


def test_a_long_sentence_is_cut_around_its_first_mark():
    text = "filler " * 100 + "the renewal is due " + "more " * 100
    passage = best_passage(text, query_terms("renewal"), width=120)
    assert len(passage.text) <= 120 and _marked(passage) == ["renewal"]


@given(st.text(max_size=300), st.sampled_from(["renewal date", "续约日期", "PRD-1 价格", "the"]))
def test_pieces_rebuild_the_passage_and_marks_hold_query_words(text, query):
    terms = query_terms(query)
    passage = best_passage(text, terms)
    assert "".join(piece for piece, _ in passage.pieces()) == passage.text
    assert passage.text in text
    starts = [s for s, _ in passage.marks]
    assert starts == sorted(starts)
