"""Hybrid recall: exact ids, Chinese paraphrase, breakdown, filters, feedback, recency, rerank."""

import math
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from almanac.search.embeddings import embed_query
from memories import selectors
from memories.models import Memory
from memories.services.feedback import memory_feedback
from memories.services.touches import memory_touch
from tests.memories.conftest import unit

pytestmark = pytest.mark.django_db

CORPUS = [
    "The PRD-2024-013 spec covers the Apollo billing export.",
    "The PRD-2024-031 spec covers the Zephyr onboarding flow.",
    "PRD-2024-013 and PRD-2023-013 were both reviewed by Carol in March.",
    "Apollo billing export must support CSV and JSON.",
    "我喜欢喝美式咖啡，不加糖。",
    "客户 Vercel 的续约会议定在 3 月 12 日。",
    "Bob prefers meetings after 10am.",
    "我们部门下个季度的预算是 200 万。",
]


@pytest.fixture
def corpus(alice, remember):
    return {text: remember(alice, text) for text in CORPUS}


def search(user, query, **kw):
    return selectors.memory_search(user=user, query=query, **kw)


def test_exact_id_ranks_first(alice, corpus, remember):
    # Make the decoys more important than the target: the exact id still wins.
    Memory.objects.exclude(pk=corpus[CORPUS[0]].pk).update(importance=1.0, quality=2.0)
    hits = search(alice, "PRD-2024-013")
    assert {hits[0].memory.pk, hits[1].memory.pk} == {corpus[CORPUS[0]].pk, corpus[CORPUS[2]].pk}
    assert hits[0].breakdown["exact_id"] and hits[0].breakdown["keyword_rank"] in (1, 2)
    assert corpus[CORPUS[1]].pk not in {h.memory.pk for h in hits[:2]}


def test_exact_id_boost_needs_the_whole_id(alice, remember):
    longer = remember(alice, "Ticket PRD-2024-0135 is about exports.", embedding=unit(1))
    exact = remember(alice, "Ticket PRD-2024-013 is about exports.", embedding=unit(2))
    hits = {h.memory.pk: h.breakdown["exact_id"] for h in search(alice, "PRD-2024-013")}
    # The longer id is another ticket: no boost, and below the relevance floor (no word of
    # the query, an unrelated embedding).
    assert hits == {exact.pk: True} and longer.pk


def test_chinese_paraphrase_is_found(alice, corpus):
    hits = search(alice, "她平时爱喝什么咖啡？", top_k=3)
    assert hits[0].memory.content == "我喜欢喝美式咖啡，不加糖。"


def test_cross_lingual_query(alice, corpus):
    hits = search(alice, "When is the Vercel renewal meeting?", top_k=3)
    assert "客户 Vercel 的续约会议定在 3 月 12 日。" in [h.memory.content for h in hits]


def test_breakdown_is_the_reranked_relevance_times_a_bounded_adjustment(alice, corpus, settings):
    hit = search(alice, "Apollo billing export", top_k=1)[0]
    b = hit.breakdown
    assert set(b) >= {"vector_rank", "keyword_rank", "rrf", "importance", "recency", "quality", "similarity"}
    expected_rrf = sum(1 / (60 + r) for r in (b["vector_rank"], b["keyword_rank"]) if r)
    assert b["rrf"] == pytest.approx(expected_rrf, abs=1e-6)
    adjust = settings.MEMORY_RANK_ADJUST * (
        2 * (b["importance"] - 0.5) + 2 * (b["recency"] - 0.5) + math.log2(b["quality"])
    )
    assert b["relevance"] == pytest.approx(
        1.0 + settings.MEMORY_RERANK_WEIGHT * (b["similarity"] + b["keyword_coverage"]), abs=1e-4
    )  # the best fused hit: its RRF scaled to 1
    assert hit.score == pytest.approx(b["relevance"] * (1 + adjust), rel=1e-3)


def test_a_matching_unimportant_memory_outranks_an_unrelated_important_one(alice, remember):
    unrelated = remember(alice, "年度团建定在十月，地点待定。", importance=1.0)
    match = remember(alice, "客户C的年度合同总额为三百万元。", importance=0.1)
    Memory.objects.filter(pk=unrelated.pk).update(quality=2.0)
    Memory.objects.filter(pk=match.pk).update(quality=0.5, updated_at=timezone.now() - timedelta(days=400))
    hits = search(alice, "年度合同总额", top_k=2)
    assert hits[0].memory.pk == match.pk


def test_nothing_relevant_returns_nothing(alice, corpus):
    assert search(alice, "ZZQX-nothing-qqq xylophone quasar") == []
    assert search(alice, "齉龘靐 量子木琴 类星体") == []


def test_a_search_does_not_change_the_next_ones_order(alice, remember, settings):
    """Recall counts what it returns (access_count, last_access), but ranking reads the
    memory's own time: the same search gives the same order however often it runs."""
    for text in ("Apollo deploys happen on Tuesdays.", "Apollo deploys need a change ticket.",
                 "Apollo deploys are announced in #releases."):  # fmt: skip
        remember(alice, text)
    first = [h.memory.pk for h in search(alice, "Apollo deploys", top_k=3)]
    for _ in range(5):
        memory_touch(memory_ids=list(reversed(first)), at=timezone.now())
    Memory.objects.filter(pk=first[-1]).update(last_access=timezone.now(), access_count=100)
    assert [h.memory.pk for h in search(alice, "Apollo deploys", top_k=3)] == first


def test_top_k_types_and_exclusions(alice, corpus, remember):
    event = remember(alice, "Apollo billing export went live on 3 月 1 日", memory_type="episodic")
    assert len(search(alice, "Apollo", top_k=2)) == 2
    only_events = search(alice, "Apollo billing export", memory_types=["episodic"])
    assert [h.memory.pk for h in only_events] == [event.pk]
    ids = {h.memory.pk for h in search(alice, "Apollo billing export", exclude_ids={event.pk})}
    assert event.pk not in ids and ids


@pytest.mark.parametrize(("exact_max", "max_scan"), [(2000, 20000), (0, 20000), (0, 5)])
def test_never_fewer_than_asked_under_a_selective_filter(alice, bob, remember, settings, exact_max, max_scan):
    # exact scan; HNSW iterative scan; HNSW hitting its scan cap, then the exact top-up.
    settings.MEMORY_EXACT_SCAN_MAX = exact_max
    with connection.cursor() as cursor:  # the session setting (settings.HNSW_MAX_SCAN_TUPLES)
        cursor.execute("SELECT set_config('hnsw.max_scan_tuples', %s, false)", [str(max_scan)])
    # Many rows alice cannot see, a few she can: the filtered vector lane still fills up.
    for i in range(40):
        remember(
            bob,
            f"Zephyr private note number {i} about rollout wave {i * 7}",
            scope="project",
            scope_key="Zephyr",
            embedding=unit(1000 + i),  # random, near-orthogonal: fast and never near-duplicates
        )
    mine = [remember(alice, text) for text in ("tea with lemon", "window seat on trains", "morning standups")]
    found = selectors.nearest(
        Memory.objects.visible_to(alice), embed_query("Zephyr rollout"), 10, tenant_id=alice.profile.tenant_id
    )
    assert sorted(pk for pk, _ in found) == sorted(m.pk for m in mine)


def test_feedback_reorders_hits_of_about_equal_relevance(alice, remember):
    a = remember(alice, "Apollo deploys happen on Tuesdays.")
    # Another scope: in the same one, the newer day would supersede the older (test_supersede).
    b = remember(alice, "Apollo deploys happen on Thursdays.", scope="project", scope_key="Apollo")
    first = search(alice, "When do Apollo deploys happen?", top_k=2)[0].memory
    loser = b if first.pk == a.pk else a
    # Many readers' feedback (one reader's counts once: test_feedback_is_bounded_…).
    Memory.objects.filter(pk=first.pk).update(quality=0.5)
    Memory.objects.filter(pk=loser.pk).update(quality=2.0)
    assert search(alice, "When do Apollo deploys happen?", top_k=2)[0].memory.pk == loser.pk


def test_feedback_is_bounded_and_one_reader_cannot_ratchet_it(tenant, alice, remember):
    from almanac.services.users import user_create

    memory = remember(alice, "something adopted a lot")
    for _ in range(12):  # alternating: a changed opinion replaces the reader's earlier one
        memory_feedback(memory=memory, user=alice, signal="corrected")
        memory_feedback(memory=memory, user=alice, signal="ignored")
    memory.refresh_from_db()
    assert memory.quality == 0.9  # one reader's "ignored", once
    readers = [user_create(tenant=tenant, username=f"reader{i}", email=f"r{i}@acme.com") for i in range(20)]
    for reader in readers[:8]:
        memory_feedback(memory=memory, user=reader, signal="adopted")
    memory.refresh_from_db()
    assert memory.quality == 2.0  # the cap
    for reader in readers:
        memory_feedback(memory=memory, user=reader, signal="corrected")
    memory.refresh_from_db()
    assert memory.quality == 0.2  # the floor
    assert memory.feedback.count() == 24 + 8 + 20


def test_one_reader_s_repeated_signal_counts_once(alice, bob, remember):
    shared = remember(alice, "Apollo deploys on Tuesdays", scope="project", scope_key="Apollo")
    for _ in range(10):
        memory_feedback(memory=shared, user=bob, signal="ignored")
    shared.refresh_from_db()
    assert shared.quality == 0.9  # one step, not ten
    assert shared.feedback.count() == 10  # every signal is still recorded
    memory_feedback(memory=shared, user=alice, signal="ignored")  # another reader counts
    memory_feedback(memory=shared, user=bob, signal="adopted")  # a changed opinion replaces bob's
    shared.refresh_from_db()
    assert shared.quality == round(0.9 * 1.15, 4)  # alice's "ignored" and bob's "adopted"


def test_recency_is_the_memorys_own_time(alice, remember):
    old = remember(alice, "Apollo status report goes to Bob.")
    new = remember(alice, "Apollo status report goes to Carol.")
    Memory.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=120))
    Memory.objects.filter(pk=new.pk).update(last_access=timezone.now() - timedelta(days=120))
    hits = {h.memory.pk: h for h in search(alice, "Apollo status report", top_k=2)}
    assert hits[old.pk].breakdown["recency"] < 0.1 < 0.9 < hits[new.pk].breakdown["recency"]


def test_an_episodic_memory_is_as_recent_as_what_it_tells(alice, remember):
    event = remember(alice, "Apollo kickoff in Lisbon with the client.", memory_type="episodic")
    Memory.objects.filter(pk=event.pk).update(occurred_at=(timezone.now() - timedelta(days=60)).date())
    (hit,) = search(alice, "Apollo kickoff Lisbon", top_k=1)
    assert hit.breakdown["recency"] == pytest.approx(0.25, abs=0.02)  # two half-lives


def test_rerank_hook(alice, corpus, settings):
    settings.MEMORY_RERANK = "tests.memories.test_recall.reverse_rerank"
    plain = [h.memory.pk for h in search(alice, "Apollo billing", top_k=15)]
    settings.MEMORY_RERANK = ""
    reranked_input = [h.memory.pk for h in search(alice, "Apollo billing", top_k=15)]
    assert plain == list(reversed(reranked_input))


def reverse_rerank(query, hits):
    return list(reversed(hits))


def test_empty_query_returns_nothing(alice, corpus):
    assert search(alice, "   ") == []


def test_chinese_and_english_find_each_other_without_a_shared_word(alice, corpus):
    assert (
        search(alice, "How do I take my coffee?", top_k=3)[0].memory.content == "我喜欢喝美式咖啡，不加糖。"
    )
    hits = [h.memory.content for h in search(alice, "鲍勃喜欢几点开会？", top_k=3)]
    assert "Bob prefers meetings after 10am." in hits


def test_a_memory_hidden_between_the_lanes_and_the_read_is_no_hit(alice, corpus, monkeypatch):
    target = corpus["Bob prefers meetings after 10am."]
    assert target.pk in {h.memory.pk for h in search(alice, "when does Bob like meetings")}
    fuse = selectors.rrf

    def hide_then_fuse(*lanes, **kw):  # the memory is rescoped while the lanes' results are fused
        Memory.objects.filter(pk=target.pk).update(acl=["user:nobody"])
        return fuse(*lanes, **kw)

    monkeypatch.setattr(selectors, "rrf", hide_then_fuse)
    assert target.pk not in {h.memory.pk for h in search(alice, "when does Bob like meetings")}


def test_the_search_api_shows_the_whole_breakdown(api, alice, corpus, settings):
    """The breakdown docs/memories.md lists, through the API: the rerank's relevance and the
    floor's inputs, with the meanings the docs give them."""
    body = api.post(
        "/memories/search", {"user": "alice", "query": "Apollo billing export", "top_k": 3}
    ).json()
    first = body["results"][0]["breakdown"]
    assert set(first) >= {
        "vector_rank", "keyword_rank", "rrf", "relevance", "importance", "recency", "quality", "exact_id",
        "similarity", "keyword_coverage",
    }  # fmt: skip
    # The best fused hit's RRF scales to 1; relevance adds the weighted floor inputs.
    assert first["relevance"] == pytest.approx(
        1.0 + settings.MEMORY_RERANK_WEIGHT * (first["similarity"] + first["keyword_coverage"]), abs=1e-4
    )
    assert first["keyword_coverage"] == pytest.approx(1.0)  # every word of the query is in it
    stored = Memory.objects.get(content=body["results"][0]["memory"]["content"])
    assert first["similarity"] == pytest.approx(
        float(embed_query("Apollo billing export") @ stored.embedding), abs=1e-3
    )


def test_the_similarity_floor_is_the_script_pairs(alice, remember, settings):
    """A Chinese task reaches an English-only note by the cross-language floor; the floor
    of each script pair is its own."""
    note = remember(alice, "The nightly database backup runs at 2 am and keeps copies for 14 days.")
    remember(alice, "我喜欢喝美式咖啡，不加糖。")
    found = search(alice, "数据库备份几点运行？", top_k=3)
    assert found and found[0].memory.pk == note.pk
    assert search(alice, "啊咧咧嘟嘟嘀嘀咕") == []  # nonsense still finds nothing
    settings.MEMORY_MIN_SIMILARITY_CROSS = 0.99
    assert note.pk not in {h.memory.pk for h in search(alice, "数据库备份几点运行？", top_k=3)}
    assert search(alice, "When does the database backup run?", top_k=1)[0].memory.pk == note.pk
