"""The filtered vector lane (`almanac.search.vectors.nearest`) against an exact scan."""

import numpy as np
import pytest
from django.conf import settings
from django.db import connection

from almanac.search import vectors
from memories.models import Memory
from tests.memories.conftest import unit


def _store(owner, scope: str, key: str, seeds) -> dict[int, np.ndarray]:
    memories = Memory.objects.bulk_create(
        Memory(tenant=owner.profile.tenant, owner=owner, scope=scope, scope_key=key, content=f"fact {seed}",
               embedding=unit(seed), acl=[Memory.acl_key(scope, key)])
        for seed in seeds
    )  # fmt: skip
    return {m.pk: unit(seed) for m, seed in zip(memories, seeds, strict=True)}


def _brute_force(rows: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[tuple[int, float]]:
    scored = sorted((1.0 - float(v @ query), pk) for pk, v in rows.items())
    return [(pk, d) for d, pk in scored[:k]]


def _same(hits, expected) -> None:
    assert [pk for pk, *_ in hits] == [pk for pk, _ in expected]
    assert np.allclose([d for _, d, *_ in hits], [d for _, d in expected], atol=1e-5)


@pytest.fixture
def corpus(alice, bob):
    """300 memories only alice sees; 6 in bob's project Zephyr; 20 the whole tenant sees."""
    private = _store(alice, "user", "alice", range(1000, 1300))
    zephyr = _store(bob, "project", "zephyr", range(2000, 2006))
    shared = _store(alice, "tenant", alice.profile.tenant.slug, range(3000, 3020))
    return private, zephyr, shared


def test_session_starts_with_the_hnsw_settings(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.max_scan_tuples')")
        assert cursor.fetchone() == (str(settings.HNSW_EF_SEARCH), str(settings.HNSW_MAX_SCAN_TUPLES))


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_nearest_is_the_exact_top_k_of_what_alice_sees(corpus, alice, seed):
    private, _, shared = corpus
    query = unit(seed)
    expected = _brute_force({**private, **shared}, query, 50)
    visible = Memory.objects.visible_to(alice)
    _same(vectors.nearest(visible, query, 50), expected)
    _same(vectors.nearest(visible, query, 50, exact=True), expected)


def test_a_filter_that_leaves_few_rows_returns_all_of_them_in_order(corpus, bob):
    _, zephyr, shared = corpus
    query = unit(9)
    hits = vectors.nearest(Memory.objects.visible_to(bob), query, 50)
    _same(hits, _brute_force({**zephyr, **shared}, query, 50))
    assert len(hits) == len(zephyr) + len(shared)  # never fewer rows than exist


def test_a_reader_never_gets_rows_outside_the_filter(corpus, charlie):
    private, zephyr, shared = corpus
    hits = vectors.nearest(Memory.objects.visible_to(charlie), unit(1000), 50)
    assert {pk for pk, _ in hits} == set(shared)  # not alice's nearest private memory


def test_distances_are_those_of_the_stored_vectors(corpus, alice):
    private, _, _ = corpus
    target = next(iter(private))
    hits = vectors.nearest(Memory.objects.visible_to(alice), private[target], 3)
    assert hits[0][0] == target and abs(hits[0][1]) < 1e-6
    assert hits == sorted(hits, key=lambda row: (row[1], row[0]))
