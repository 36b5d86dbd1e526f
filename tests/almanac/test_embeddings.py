"""The query side of the encoder (almanac.search.embeddings): a query is embedded as a
statement, so a question meets the turn that answers it before the turn that asked it."""

import numpy as np

from almanac.search.embeddings import embed, embed_query

ASKED = "Maya: Where are you going on your trip to Porto?"
ANSWERED = "Daniel: The tiled houses along the river in Porto. I took six hundred photos."


def test_a_question_is_embedded_as_the_statement_it_looks_for():
    assert np.array_equal(embed_query("Where is Porto?"), embed_query("Where is Porto."))
    assert np.array_equal(embed_query("波尔图在哪里？"), embed_query("波尔图在哪里。"))


def test_the_answering_turn_is_nearer_than_the_asking_one():
    asked, answered = embed([ASKED, ANSWERED])
    query = embed_query("What was the highlight of Daniel's trip to Porto?")
    assert float(answered @ query) > float(asked @ query)
