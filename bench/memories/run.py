"""Recall latency (service and HTTP), write throughput and recall quality on the bench company.

    ALMANAC_DB_NAME=almanac_bench python bench/memories/run.py --queries 300 --http 150 --writes 100

Latencies include the query embedding (the embed_query cache is cleared before each call)
unless marked "cached embedding". Quality: hits@5 of the labelled set (data.LABELLED) for
the keyword lane alone, the vector lane alone and the fused recall; `vector_lane_recall`:
the share of an exact scan's top 50 the vector lane finds (bench/memories/lane_recall.py). The memories the write
phase adds are deleted at its end, so repeated runs measure the same data.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from almanac.models import AgentKey, Tenant  # noqa: E402
from almanac.search import keyword, vectors, warm_up  # noqa: E402
from almanac.search.embeddings import _embed_query_cached, embed_query  # noqa: E402
from almanac.services.keys import agentkey_create, agentkey_revoke  # noqa: E402
from bench.memories import data  # noqa: E402
from bench.memories.generate import SLUG, sentence  # noqa: E402
from bench.memories.lane_recall import default_queries, lane_recall  # noqa: E402
from memories import selectors  # noqa: E402
from memories.models import CORPUS, Memory  # noqa: E402
from memories.services import touches  # noqa: E402
from memories.services.memories import memory_create, memory_delete  # noqa: E402

User = get_user_model()


def pct(samples: list[float]) -> dict:
    a = np.asarray(samples)
    return {"n": len(a), "p50": round(float(np.percentile(a, 50)), 2), "p95": round(float(np.percentile(a, 95)), 2),
            "p99": round(float(np.percentile(a, 99)), 2), "mean": round(float(a.mean()), 2)}  # fmt: skip


def queries(rng: random.Random) -> list[str]:
    out = [q for _, q, _ in data.LABELLED]
    for _ in range(80):
        text, _ = sentence(rng)
        words = text.replace("。", " ").replace(".", " ").split()
        out.append(
            " ".join(words[: max(2, len(words) // 2)]) if len(words) > 3 else text[: max(4, len(text) // 2)]
        )
    out += [f"{c} 续约" for c in data.CUSTOMERS[:8]] + [f"what does u0{i}0 prefer" for i in range(5)]
    return out


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def bench_service(users, qs, n, rng, cached: bool) -> dict:
    samples = []
    for _ in range(n):
        user, query = rng.choice(users), rng.choice(qs)
        if not cached:
            _embed_query_cached.cache_clear()
        samples.append(timed(lambda u=user, q=query: selectors.memory_search(user=u, query=q, top_k=10)))
    return pct(samples)


def bench_http(users, qs, n, rng, key: str) -> dict:
    client, samples = Client(), []
    headers = {"Authorization": f"Bearer {key}"}
    for _ in range(n):
        body = {"user": rng.choice(users).username, "query": rng.choice(qs), "top_k": 10}
        _embed_query_cached.cache_clear()

        def call(b=body):
            response = client.post(
                "/api/v1/memories/search", b, content_type="application/json", headers=headers
            )
            assert response.status_code == 200, response.content

        samples.append(timed(call))
    return pct(samples)


def bench_writes(users, n, rng) -> dict:
    """Timed `memory_create` calls; what they wrote is deleted afterwards, so runs repeat."""
    samples, dupes, written = [], 0, []
    started = time.perf_counter()
    for i in range(n):
        (first, kind), (second, _) = sentence(rng), sentence(rng)
        content = f"{first} {second} [write {i}]"  # two facts: rarely a near-duplicate of a stored one

        def write(u=rng.choice(users), c=content, k=kind):
            nonlocal dupes
            memory, dup = memory_create(owner=u, content=c, memory_type=k, reason="bench")
            dupes += dup is not None
            if dup is None:
                written.append(memory)

        samples.append(timed(write))
    elapsed = time.perf_counter() - started
    remove_written(written)
    return {**pct(samples), "writes_per_s": round(n / elapsed, 1), "duplicates": dupes}


def remove_written(memories) -> None:
    ids = [m.pk for m in memories]
    for memory in memories:
        memory_delete(memory=memory, user=memory.owner, reason="bench cleanup")
    Memory.history.filter(id__in=ids).delete()


def quality(owner) -> dict:
    tenant_id = owner.profile.tenant_id
    visible = Memory.objects.visible_to(owner)
    hits = {"keyword": 0, "vector": 0, "vector_exact": 0, "fused": 0}
    misses = []
    for content, query, kind in data.LABELLED:
        target = Memory.objects.get(tenant_id=tenant_id, content=content).pk
        kq = keyword.keyword_query(tenant_id=tenant_id, corpus=CORPUS, text=query)
        kw = selectors._keyword_lane(visible, kq, size=50)[:5]
        vector = embed_query(query)
        vec = [pk for pk, _ in selectors.nearest(visible, vector, 50, tenant_id=tenant_id)][:5]
        exact = [pk for pk, _ in vectors.nearest(visible, vector, 5, exact=True)]
        fused = [h.memory.pk for h in selectors.memory_search(user=owner, query=query, top_k=5)]
        for lane, ids in (("keyword", kw), ("vector", vec), ("vector_exact", exact), ("fused", fused)):
            hits[lane] += target in ids
        if target not in fused:
            misses.append({"query": query, "kind": kind})
    n = len(data.LABELLED)
    return {"queries": n, **{f"hits@5_{k}": round(v / n, 3) for k, v in hits.items()}, "fused_misses": misses}


def plan(user, query: str) -> str:
    """EXPLAIN ANALYZE of the HNSW vector lane (the connection's session settings apply)."""
    from pgvector.django import CosineDistance

    vector = embed_query(query)
    qs = Memory.objects.visible_to(user).filter(memory_type__in=list(selectors.SEARCH_TYPES))
    dist = CosineDistance("embedding", vector)
    sql, params = (
        qs.annotate(dist=dist).order_by(dist, "id").values_list("id", "dist")[:50].query.sql_with_params()
    )
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql, params)
        lines = [r[0] if "[" not in r[0] else r[0][:80] + "…" for r in cursor.fetchall()]
    return "\n".join(lines)


def agent_key(tenant) -> str:
    for key in AgentKey.objects.filter(tenant=tenant, name="memories-bench", revoked_at__isnull=True):
        agentkey_revoke(key=key)
    return agentkey_create(tenant=tenant, name="memories-bench", rate_limit="1000000/m")[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--http", type=int, default=150)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    tenant = Tenant.objects.get(slug=SLUG)
    users = list(
        User.objects.filter(profile__tenant=tenant, username__startswith="u").select_related("profile")
    )
    rng = random.Random(3)
    qs = queries(rng)
    write_rng = random.Random(time.time_ns())
    total = Memory.objects.filter(tenant=tenant).count()
    visible = [Memory.objects.visible_to(u).count() for u in users]
    warm_up()  # as a web process does at start (config.wsgi)
    selectors.memory_search(user=users[0], query="warm up")
    # Recall hits of earlier runs raise recency and would skew the quality numbers: start clean.
    touches.flush()
    Memory.objects.filter(tenant=tenant).exclude(access_count=0, last_access=None).update(
        access_count=0, last_access=None
    )
    result = {
        "memories": total,
        "visible_per_user": {
            "min": min(visible),
            "mean": round(sum(visible) / len(visible)),
            "max": max(visible),
        },
        "quality": quality(users[0]),
        # The vector lane's top 50 against an exact scan of the same visible rows.
        "vector_lane_recall": lane_recall("memories", random.Random(5).sample(users, 5), default_queries(40)),
        "recall_service_ms": bench_service(users, qs, args.queries, rng, cached=False),
        "recall_service_cached_embedding_ms": bench_service(users, qs, args.queries, rng, cached=True),
        "recall_http_ms": bench_http(users, qs, args.http, rng, agent_key(tenant)),
        "write_ms": bench_writes(users, args.writes, write_rng),
        "vector_lane_plan": plan(users[0], "客户 Vercel 续约"),
    }
    print(json.dumps(result, ensure_ascii=False, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
