"""The forms a query is searched in (almanac.search.query)."""

from almanac.search.query import MAX_QUERY_CHARS, query_forms


def test_a_blank_query_has_no_form():
    assert query_forms("") == [] and query_forms("  \n ") == []


def test_a_short_plain_query_is_searched_as_written():
    assert query_forms("  Vercel renewal discount ") == ["Vercel renewal discount"]


def test_a_dialogue_is_searched_without_its_speaker_labels():
    dialogue = "用户：端午想去张家界\n助手：那边风景很美。\n用户：帮我排个两天的行程"
    assert query_forms(dialogue) == ["端午想去张家界\n那边风景很美。\n帮我排个两天的行程"]
    english = "User: we talked about the Apollo launch\nAssistant: yes, on Friday\nUser: who owns it?"
    assert all("User:" not in form and "Assistant:" not in form for form in query_forms(english))


def test_the_latest_turn_is_a_form_of_its_own_and_survives_the_cut():
    earlier = "\n".join(f"User: small talk number {i} about the weather and lunch" for i in range(200))
    dialogue = f"{earlier}\nAssistant: anything else?\nUser: what discount did Vercel ask for at renewal?"
    forms = query_forms(dialogue)
    assert len(forms) == 2 and all(len(form) <= MAX_QUERY_CHARS for form in forms)
    assert "Vercel" not in forms[0]  # the whole text is cut at MAX_QUERY_CHARS...
    assert "what discount did Vercel ask for at renewal?" in forms[1]  # ...its latest turn is not
