"""Every benchmark's generator (and the core of its runner) at a tiny size, against the real
schema: a change of the schema that breaks a bench's bulk load fails here, not in the next
benchmark run. (The wiki's generator: tests/wiki/test_bench_generator.py; the quality
company: tests/wiki/test_bench_company_exports.py.)"""

import random

import pytest
from django.db import connection

from connectors.models import Event
from memories.models import Memory
from wiki.models import PageSection


@pytest.mark.db_owner  # the load drops and rebuilds the vector index, as the owner does
def test_memories_generator_copies_into_the_current_schema(db):
    from bench.memories import data
    from bench.memories import generate as gen
    from memories.selectors import memory_search

    with connection.cursor() as cursor:  # the script runs in autocommit; here, in the test's transaction
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    tenant, people = gen.company(users=4)
    gen.fill(tenant, people, 40, pool_size=10, noise=0.027)
    memories = Memory.objects.filter(tenant=tenant)
    assert memories.count() == 40 + len(data.LABELLED)
    assert not memories.filter(embedding=None).exists()
    assert set(memories.values_list("memory_type", flat=True)) <= set(Memory.Type.values)
    content = data.LABELLED[0][0]
    assert content in [h.memory.content for h in memory_search(user=people[0], query=content, top_k=5)]

    from bench.memories import lane_recall
    from bench.memories import run as runner  # its measurements, a few calls each

    rng, queries = random.Random(1), runner.queries(random.Random(1))[:3]
    assert runner.bench_service(people, queries, 3, rng, cached=False)
    assert runner.bench_http(people, queries, 2, rng, runner.agent_key(tenant))
    before = memories.count()
    assert runner.bench_writes(people, 3, rng)["writes_per_s"] > 0
    assert memories.count() == before  # what it wrote is removed
    assert runner.quality(people[0])["queries"] == len(data.LABELLED)
    assert lane_recall.lane_recall("memories", people[:2], queries[:2])["pairs"] > 0


@pytest.mark.db_owner
def test_context_generator_loads_sections_and_memories(db):
    from bench.context import generate as gen
    from bench.wiki.generate import ensure_users

    tenant = gen.fresh_tenant()
    ensure_users(tenant)
    embedder = gen.Embedder()
    assert gen.load_sections(tenant, 30, embedder, seed=7) > 0
    assert gen.load_memories(tenant, 30, 10, embedder, seed=7) == 30
    assert PageSection.objects.filter(tenant=tenant).exists()
    assert Memory.objects.filter(tenant=tenant).count() == 30

    from almanac.services.keys import agentkey_create
    from bench.context.run import make_tasks, query_counts
    from bench.memories.touch import table_state

    key = agentkey_create(tenant=tenant, name="bench")[1]
    users = list(tenant.profiles.order_by("id").values_list("user__username", flat=True)[:2])
    assert all(count > 0 for count in query_counts(users, make_tasks(2, seed=1), key, n=2))
    with connection.cursor() as cursor:
        assert table_state(cursor, Memory._meta.db_table)["indexes"]


def test_wiki_bench_runner_pushes_and_searches(tenant):
    from bench.wiki import run as runner
    from bench.wiki.generate import ensure_users

    users = ensure_users(tenant)
    assert len(runner._push_delays(tenant, users, 5, seed=1)) == 5
    assert len(runner._search_latency(users, 3)) == 3


def test_connector_ingest_bench_ingests_its_batches(tenant):
    from bench.connector_ingest import _timed_batches
    from bench.wiki.generate import ensure_users, generate

    ensure_users(tenant)
    payloads = generate(tenant, 30, seed=2)
    seconds, totals = _timed_batches(tenant, payloads, batch=10)
    assert totals == {"accepted": 30, "duplicates": 0} and seconds > 0
    assert _timed_batches(tenant, payloads, batch=10)[1] == {"accepted": 0, "duplicates": 30}


@pytest.mark.django_db(transaction=True)
def test_wiki_burst_bench_measures_what_a_burst_enqueues(tenant, monkeypatch):
    from django_q.conf import Conf

    from bench.wiki.burst import burst

    monkeypatch.setattr(Conf, "SYNC", False)  # the broker's queue, no worker
    from bench.wiki.generate import ensure_users, generate

    ensure_users(tenant)
    result = burst(tenant, generate(tenant, 20, seed=4), worker=False, timeout=0)
    assert result["events"] == 20 and result["events_by_state"] == {"pending": 20}
    assert result["max_queue"] == 1 and result["max_copies_of_one_task"] == 1  # one drain
    assert Event.objects.filter(tenant=tenant).count() == 20


def test_chaos_checks_count_what_was_written(tenant):
    """The crash phase's writes (through the API, as its writers send them), its drain and
    its checks, without the servers it kills."""
    from django.test import Client

    from almanac.services.keys import agentkey_create
    from almanac.services.users import user_create
    from bench.chaos import run as chaos

    for name in chaos.USERS[:2]:
        user_create(tenant=tenant, username=name, email=f"{name}@chaos.example")
    agent = agentkey_create(tenant=tenant, name="chaos", rate_limit="0")[1]
    pusher = agentkey_create(tenant=tenant, name="chaos-push", can_push_events=True, rate_limit="0")[1]
    client, rng, run = Client(), random.Random(3), "t1"
    memories, events = [], []
    for i in range(3):
        token = f"cm{run}w0n{i}"
        body = {"user": "u0", "content": f"{token}: " + " ".join(rng.sample(chaos.WORDS, 8)), "scope": "user"}
        reply = client.post(
            "/api/v1/memories", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {agent}"
        )
        memories.append((token, reply.status_code, reply.json().get("id"), reply.json().get("duplicate_of")))
        token = f"ce{run}p0n{i}"
        body = chaos.event(
            run, channel=f"X{run}C{i}", external_id=f"{token}/1700000000.{i:06d}",
            text=f"{token} " + " ".join(rng.sample(chaos.WORDS, 6)), when=chaos.datetime.now(chaos.UTC),
        )  # fmt: skip
        reply = client.post(
            "/api/v1/connectors/events",
            body,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {pusher}",
        )
        events.append((token, body["external_id"], reply.status_code, reply.json()))
    assert chaos.drain(run, wait=0)["pending_after_wait"] == 3  # left to `wiki_compile`
    checked = chaos.check_writes(tenant, run, memories, events)
    assert checked["memory_writes"]["acknowledged"] == 3 and checked["events"]["acknowledged"] == 3
    assert not any(checked["memory_writes"][k] for k in ("lost", "duplicated", "half_written"))
    assert not any(
        checked["events"][k]
        for k in ("lost", "duplicated", "not_compiled", "missing_from_wiki", "compiled_twice")
    )


@pytest.mark.django_db(transaction=True)
def test_context_bench_calls_the_api_and_mcp_alike(live_server, tenant, alice, agent_key):
    import httpx

    from bench.context.run import call

    out, errors = [], []
    headers = {"Authorization": f"Bearer {agent_key}"}
    with httpx.Client(base_url=live_server.url, headers=headers, timeout=60) as client:
        for mcp in (False, True):
            call(client, "alice", "Vercel renewal", 500, 0.0, out, errors, mcp)
    assert errors == []
    assert [row[4] for row in out] == [False, True]  # one call each way, both read as the API's answer
