"""Embeddings computed ahead in a child process (almanac.search.embed_ahead): the same vectors
as in this process, and the compiler's backlog path through the child makes the same wiki."""

import numpy as np
from django.db import transaction

from almanac.search.embed_ahead import embed_ahead
from almanac.search.embeddings import embed
from connectors.services.ingest import event_ingest
from tests.wiki.conftest import slack
from wiki.matching import entities_changed
from wiki.models import PageSection
from wiki.services import sections
from wiki.services.backlog import compile_pending

TEXTS = ["Vercel renewal at risk, budget cut by 20%", "华为 续约有风险，预算削减", ""]


def test_a_long_backlog_embeds_in_a_child_process_with_the_same_vectors(settings):
    settings.EMBED_AHEAD_MIN_TEXTS = 3
    with embed_ahead(texts_expected=3) as ahead:
        assert ahead.child is not None
        vectors = ahead.submit(TEXTS).result()
    assert np.allclose(vectors, embed(TEXTS), atol=1e-6)


def test_a_short_backlog_embeds_here(settings):
    settings.EMBED_AHEAD_MIN_TEXTS = 4
    with embed_ahead(texts_expected=3) as ahead:
        assert ahead.child is None
        assert np.allclose(ahead.submit(TEXTS).result(), embed(TEXTS))


def _compiled(tenant, settings, min_texts: int):
    """The wiki's sections with their embeddings after a backlog of four events compiles."""
    settings.EMBED_AHEAD_MIN_TEXTS = min_texts
    sections._EMBED_CACHE.clear()
    entities_changed(tenant.pk)  # the last run's entities were rolled back
    with transaction.atomic():
        for n, text in enumerate(
            ["Vercel Inc. wants SSO", "Apollo slips a week", "Vercel pricing", "Apollo demo"]
        ):
            event_ingest(
                tenant=tenant, payload=slack(text, ts=f"170000000{n}.000100", tags={"customer": "Vercel"})
            )
        assert compile_pending(tenant=tenant) == 4
        rows = sorted(PageSection.objects.values_list("thread_key", "content", "embedding"))
        transaction.set_rollback(True)
    return rows


def test_the_compiler_backlog_through_the_child_makes_the_same_sections(tenant, settings):
    here, ahead = _compiled(tenant, settings, 10_000), _compiled(tenant, settings, 0)
    assert [r[:2] for r in ahead] == [r[:2] for r in here] and len(here) == 4
    for (*_, a), (*_, b) in zip(ahead, here, strict=True):
        assert np.allclose(np.asarray(a), np.asarray(b), atol=1e-6)


def test_a_child_that_dies_leaves_the_embedding_to_this_process(settings):
    settings.EMBED_AHEAD_MIN_TEXTS = 0
    with embed_ahead(texts_expected=3) as ahead:
        ahead.child.kill()
        ahead.child.wait()
        assert np.allclose(ahead.submit(TEXTS).result(), embed(TEXTS))
        assert ahead.child is None
        assert np.allclose(ahead.submit(TEXTS[:1]).result(), embed(TEXTS[:1]))
