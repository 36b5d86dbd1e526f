"""Recall hits (`memories.services.touches`): who counts them, the two modes, the UPDATE."""

import pytest
from django.db import connection
from django.utils import timezone

from memories import selectors
from memories.models import Memory
from memories.services import touches
from memories.services.touches import memory_touch_counts, memory_touch_later
from tests.memories.conftest import unit

pytestmark = pytest.mark.django_db

COFFEE = [
    "我喜欢喝美式咖啡，不加糖。",
    "Bob prefers meetings after 10am.",
    "Apollo billing export must support CSV.",
]


@pytest.fixture
def coffee(alice, remember):
    return [remember(alice, text) for text in COFFEE]


def _counts(ids) -> set[int]:
    return set(Memory.objects.filter(pk__in=ids).values_list("access_count", flat=True))


def test_a_recall_touches_nothing(alice, coffee, settings, django_capture_on_commit_callbacks):
    # A read: the caller counts what it shows (the web UI's search shows memories to a
    # person, which is no recall).
    settings.MEMORY_TOUCH_MODE = "task"
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert selectors.memory_search(user=alice, query="美式咖啡", top_k=2)
    assert callbacks == [] and _counts([m.pk for m in coffee]) == {0}


def test_the_search_endpoint_touches_what_it_returns(
    api, alice, coffee, settings, django_capture_on_commit_callbacks
):
    settings.MEMORY_TOUCH_MODE = "task"  # tests run queued tasks synchronously
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/memories/search", {"user": "alice", "query": "美式咖啡", "top_k": 2})
    returned = [hit["memory"]["id"] for hit in response.json()["results"]]
    assert returned == [coffee[0].pk] and _counts(returned) == {1}  # the others are not relevant
    assert _counts({m.pk for m in coffee} - set(returned)) == {0}


def test_task_touch_mode(alice, coffee, settings, django_capture_on_commit_callbacks):
    settings.MEMORY_TOUCH_MODE = "task"  # tests run queued tasks synchronously
    ids = [coffee[0].pk, coffee[1].pk]
    with django_capture_on_commit_callbacks(execute=True):
        memory_touch_later(memory_ids=ids)
    touched = Memory.objects.filter(pk__in=ids)
    assert all(m.access_count == 1 and m.last_access is not None for m in touched)
    assert Memory.objects.exclude(pk__in=ids).filter(access_count__gt=0).count() == 0


def test_buffered_touch_mode(alice, coffee, settings, django_capture_on_commit_callbacks):
    assert settings.MEMORY_TOUCH_MODE == "buffer"  # the default
    settings.MEMORY_TOUCH_FLUSH_SECONDS = 3600
    ids = [coffee[0].pk, coffee[1].pk]
    with django_capture_on_commit_callbacks(execute=True):
        memory_touch_later(memory_ids=ids)
        memory_touch_later(memory_ids=ids)
    assert _counts(ids) == {0}  # not yet: buffered
    assert touches.flush() == 2
    assert _counts(ids) == {2}
    assert touches._buffer.timer is None  # the flush stopped the pending timer


def test_touch_on_recall_off_counts_nothing(alice, coffee, settings, django_capture_on_commit_callbacks):
    settings.MEMORY_TOUCH_ON_RECALL = False
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        memory_touch_later(memory_ids=[coffee[0].pk])
    assert callbacks == []


def _block(memory_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT (ctid::text::point)[0]::int FROM memories_memory WHERE id = %s", [memory_id])
        return cursor.fetchone()[0]


@pytest.mark.db_owner  # TRUNCATE for a fresh heap is the owner's right
def test_touch_rewrites_a_row_in_its_own_page(alice, remember):
    # A hit count update is HOT only if the new row version fits in the row's heap page.
    # Fill the first page the way writes do, then touch the last row written into it:
    # the table's fillfactor leaves it room, so no index gets a new entry for the hit.
    # (A fresh heap: earlier tests' rolled-back rows still take room in the first pages.)
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_memory CASCADE")
    memories = [
        remember(alice, f"Quarterly plan note {i:04d} for the regional sales team", embedding=unit(1000 + i))
        for i in range(60)
    ]
    first_page = [m for m in memories if _block(m.pk) == 0]
    assert len(first_page) < len(memories)  # the rows span several pages
    last = first_page[-1]
    assert memory_touch_counts(counts={last.pk: (1, timezone.now())}) == 1
    assert _block(last.pk) == 0
    assert Memory.objects.get(pk=last.pk).access_count == 1
