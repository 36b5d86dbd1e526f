"""Near-duplicate check on write: cosine > MEMORY_DEDUP_THRESHOLD, within the same scope only."""

import pytest
from django.conf import settings

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


@pytest.mark.parametrize(
    "first, second",
    [
        ("Apollo deploys happen on Tuesdays", "Apollo deploys happen on Thursdays"),
        ("Apollo 每周二部署", "Apollo 每周四部署"),
        ("Apollo 上线日期是 3 月 12 日", "Apollo 上线日期是 3 月 19 日"),
    ],
)
def test_a_close_sentence_with_other_facts_is_a_new_memory(alice, first, second):
    # The offline embeddings are near-identical (above the threshold), the facts are not:
    # the second is an update or a contradiction, and dropping it as a duplicate loses it.
    from almanac.search.embeddings import embed

    a, b = embed([first, second])
    assert float(a @ b) > settings.MEMORY_DEDUP_THRESHOLD
    services.memory_create(owner=alice, content=first)
    memory, duplicate = services.memory_create(owner=alice, content=second)
    assert duplicate is None and memory.content == second
    assert Memory.objects.count() == 2


@pytest.mark.parametrize(
    "first, second",
    [
        ("I like green tea in the morning", "I don't like green tea in the morning"),
        ("Carol likes the new dashboard", "Carol does not like the new dashboard"),
        ("我喜欢喝绿茶", "我不喜欢喝绿茶"),
        ("The Zephyr budget is 30k EUR", "The Zephyr budget is 40k EUR"),
        ("我们的预算是 30 万元", "我们的预算是 40 万元"),
        ("Acme 的续约合同打八折，由 Bob 跟进", "Acme 的续约合同打九折，由 Bob 跟进"),
        ("The Acme price is ten thousand dollars", "The Acme price is twelve thousand dollars"),
        ("We sign with Acme on the tenth of March", "We sign with Acme on the fifteenth of March"),
        ("The Acme review is next Wednesday in room 3", "The Acme review was last Wednesday in room 3"),
        ("Acme 评审在下周三", "Acme 评审在上周三"),
        ("周五的 Acme 评审会定在下午3点", "周五的 Acme 评审会定在下午3点半"),
        ("At Acme I prefer tea over coffee.", "At Acme I prefer coffee over tea."),
        ("Alice reports to Bob on the Acme account.", "Bob reports to Alice on the Acme account."),
        ("Acme 从阿里云迁移到腾讯云", "Acme 从腾讯云迁移到阿里云"),
        ("Shipped the Acme fix yesterday", "Shipping the Acme fix tomorrow"),
    ],
)
def test_negation_and_amounts_make_another_fact_however_close_the_vectors(alice, first, second):
    # The offline encoder keeps these below the threshold; another embedding model may not.
    base = unit(6)
    services.memory_create(owner=alice, content=first, embedding=base)
    _, duplicate = services.memory_create(owner=alice, content=second, embedding=at_cosine(base, 0.98))
    assert duplicate is None and Memory.objects.count() == 2


def test_a_restatement_with_the_same_facts_is_still_a_duplicate(alice):
    first, _ = services.memory_create(owner=alice, content="Apollo deploys happen on Tuesdays at 10:00")
    _, duplicate = services.memory_create(owner=alice, content="Apollo deploys happen on Tuesdays at 10:00.")
    assert duplicate == first


def test_the_nearest_with_other_facts_does_not_hide_a_real_duplicate(alice):
    base = unit(4)
    same, _ = services.memory_create(
        owner=alice, content="standup at 9:30", embedding=at_cosine(base, 0.97, seed=5)
    )
    _, not_a_duplicate = services.memory_create(owner=alice, content="standup at 10:30", embedding=base)
    assert not_a_duplicate is None  # nearer to what comes next, but another time
    _, duplicate = services.memory_create(owner=alice, content="the standup is at 9:30", embedding=base)
    assert duplicate == same


@pytest.mark.parametrize(
    ("first", "second"),
    [("The Acme budget is $3M", "The Acme budget is $3 million"), ("合同金额是3万元", "合同金额是三万元")],
)
def test_a_restatement_is_a_duplicate(alice, first, second):
    base = unit(8)
    kept, _ = services.memory_create(owner=alice, content=first, embedding=base)
    _, duplicate = services.memory_create(owner=alice, content=second, embedding=at_cosine(base, 0.98))
    assert duplicate == kept


def _post(api, content, **kw):
    return api.post("/memories", {"user": "alice", "content": content, **kw})


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("合同金额是3万元", "合同金额是3千元"),
        ("The Acme deal is worth 3 million USD", "The Acme deal is worth 3 billion USD"),
        ("The Acme deal is worth 3 thousand dollars", "The Acme deal is worth 3 million dollars"),
    ],
)
def test_a_different_magnitude_is_not_a_duplicate(api, alice, first, second):
    assert _post(api, first).status_code == 201
    response = _post(api, second)
    assert response.status_code == 201, response.json()
    assert response.json().get("duplicate_of") is None
    assert _post(api, second).status_code == 200  # the same fact again still is one


def test_an_episode_on_another_day_is_not_a_duplicate(api, alice):
    kw = {"memory_type": "episodic"}
    first = _post(api, "Met Acme about the renewal", occurred_at="2026-03-13", **kw)
    assert first.status_code == 201
    later = _post(api, "Met Acme about the renewal", occurred_at="2026-05-15", **kw)
    assert later.status_code == 201 and later.json()["occurred_at"] == "2026-05-15"
    again = _post(api, "Met Acme about the renewal", occurred_at="2026-05-15", **kw)
    assert again.status_code == 200 and again.json()["duplicate_of"] == later.json()["id"]
