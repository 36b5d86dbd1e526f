"""Vector-lane recall against an exact scan of the same visible rows (issue 21, item 5).

For each (reader, query) pair: the lane's top 50 (what search uses: memories'
`selectors.nearest`, the wiki's `search._vector_lane`) against the exact top 50 of the same
visible rows (`vectors.nearest(exact=True)`: every visible row's full-precision cosine
distance, sorted), as the share of the exact top 50 the lane found (a tie with the exact
50th counts), averaged; with the
lane's and the exact scan's latency.

    ALMANAC_DB_NAME=almanac_bench python bench/memories/lane_recall.py --lanes memories
    ALMANAC_DB_NAME=almanac_bench_ctx python bench/memories/lane_recall.py --lanes memories wiki

`bench/memories/run.py` reports the memory lane with it.
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

from almanac.search import vectors  # noqa: E402
from almanac.search.embeddings import embed_query  # noqa: E402
from almanac.selectors import access_snapshot  # noqa: E402

SIZE = 50


def _memory_lane():
    from memories import selectors
    from memories.models import Memory

    def visible(user):
        return Memory.objects.visible_to(user).filter(memory_type__in=list(selectors.SEARCH_TYPES))

    def lane(user, query):
        vector = embed_query(query)
        return selectors.nearest(visible(user), vector, SIZE, tenant_id=user.profile.tenant_id)

    return visible, lane


def _wiki_lane():
    from wiki import search
    from wiki.models import PageSection

    def visible(user):
        return PageSection.objects.visible_to(user).filter(embedding__isnull=False)

    def lane(user, query):
        return search._vector_lane(PageSection.objects.visible_to(user), query=query)

    return visible, lane


LANES = {"memories": _memory_lane, "wiki": _wiki_lane}


def _ms(samples: list[float]) -> dict:
    a = np.asarray(samples)
    return {"p50": round(float(np.percentile(a, 50)), 2), "p99": round(float(np.percentile(a, 99)), 2)}


def found(got: list[tuple], exact: list[tuple]) -> float:
    """Share of the exact top k the lane found. Rows with the same vector tie (the bench
    corpora share texts across owners): a lane row as near as the exact k-th counts."""
    kth = exact[-1][1] + 1e-6
    return min(sum(1 for row in got if row[1] <= kth), len(exact)) / len(exact)


def lane_recall(lane: str, users, queries: list[str]) -> dict:
    """Recall of the exact top 50 by `lane`, over every (user, query) pair."""
    visible, search = LANES[lane]()
    recalls, lane_ms, exact_ms = [], [], []
    for query in queries:
        vector = embed_query(query)  # cached: the lanes' timings leave the encoder out
        for user in users:
            with access_snapshot():
                started = time.perf_counter()
                got = search(user, query)
                lane_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                exact = vectors.nearest(visible(user), vector, SIZE, exact=True)
                exact_ms.append((time.perf_counter() - started) * 1000)
            if exact:
                recalls.append(found(got, exact))
    r = np.asarray(recalls)
    return {
        "pairs": len(recalls),
        f"recall_of_exact_top{SIZE}": round(float(r.mean()), 4),
        "worst_pair": round(float(r.min()), 3),
        "pairs_below_0.9": int((r < 0.9).sum()),
        "lane_ms": _ms(lane_ms),
        "exact_scan_ms": _ms(exact_ms),
    }


def default_queries(n: int) -> list[str]:
    """The labelled memory queries, then the context bench's tasks."""
    from bench.context.run import make_tasks
    from bench.memories import data

    out = [q for _, q, _ in data.LABELLED]
    return (out + make_tasks(n, 5))[:n]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lanes", nargs="+", choices=sorted(LANES), default=["memories"])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--readers", type=int, default=5)
    args = parser.parse_args()
    users = list(
        get_user_model()
        .objects.filter(is_active=True, profile__isnull=False)
        .select_related("profile")
        .order_by("id")
    )
    readers = random.Random(5).sample(users, min(args.readers, len(users)))
    queries = default_queries(args.queries)
    report = {lane: lane_recall(lane, readers, queries) for lane in args.lanes}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
