"""Near-duplicate check on write: cosine > MEMORY_DEDUP_THRESHOLD, within the same scope only."""

import pytest

from memories import services
from memories.models import Memory
from tests.memories.conftest import at_cosine, unit

pytestmark = pytest.mark.django_db


def test_just_above_threshold_returns_existing(alice):
    base = unit(1)
    first, _ = services.memory_create(owner=alice, content="likes aisle seats", embedding=base)
    again, duplicate = services.memory_create(
        owner=alice, content="prefers aisle seats", embedding=at_cosine(base, 0.925)
    )
    assert duplicate == first and again == first
    assert Memory.objects.count() == 1


def test_just_below_threshold_inserts(alice):
    base = unit(1)
    services.memory_create(owner=alice, content="likes aisle seats", embedding=base)
    _, duplicate = services.memory_create(
        owner=alice, content="likes window seats", embedding=at_cosine(base, 0.915)
    )
    assert duplicate is None
    assert Memory.objects.count() == 2


def test_threshold_is_configurable(alice, settings):
    settings.MEMORY_DEDUP_THRESHOLD = 0.99
    base = unit(1)
    services.memory_create(owner=alice, content="likes aisle seats", embedding=base)
    _, duplicate = services.memory_create(
        owner=alice, content="prefers aisle seats", embedding=at_cosine(base, 0.95)
    )
    assert duplicate is None


def test_same_vector_in_another_scope_is_not_a_duplicate(alice, bob):
    base = unit(2)
    services.memory_create(owner=alice, content="Apollo uses Postgres 18", embedding=base)
    _, dup_project = services.memory_create(
        owner=alice, content="Apollo uses Postgres 18", scope="project", scope_key="Apollo", embedding=base
    )
    _, dup_other_user = services.memory_create(owner=bob, content="Apollo uses Postgres 18", embedding=base)
    assert dup_project is None and dup_other_user is None
    assert Memory.objects.count() == 3
    # ... but a project member writing it again into the project is.
    _, dup = services.memory_create(
        owner=bob,
        content="Apollo is on Postgres 18",
        scope="project",
        scope_key="Apollo",
        embedding=at_cosine(base, 0.97),
    )
    assert dup is not None and dup.scope == "project"


def test_archived_memory_is_not_a_duplicate(alice):
    base = unit(3)
    old, _ = services.memory_create(owner=alice, content="old fact", embedding=base)
    Memory.objects.filter(pk=old.pk).update(status="archived")
    _, duplicate = services.memory_create(owner=alice, content="old fact", embedding=base)
    assert duplicate is None


def test_api_duplicate_is_200_with_duplicate_of(api, alice):
    first = api.post("/memories", {"user": "alice", "content": "我喜欢喝美式咖啡，不加糖"})
    assert first.status_code == 201
    again = api.post("/memories", {"user": "alice", "content": "我喜欢喝美式咖啡，不加糖。"})
    assert again.status_code == 200
    assert again.json()["duplicate_of"] == first.json()["id"] == again.json()["id"]
