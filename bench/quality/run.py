"""Retrieval-quality benchmark: dev sets (a) English conversations, (b) Chinese dialogue
memories, (c) company questions over imported exports, (d) a generated company's exports
in three arrival orders, (e) cross-language notes, (f) contract clauses (bench/quality/contracts.py,
`--sets f`). See bench/quality/README.md.

    ALMANAC_DB_NAME=almanac_bench_quality .venv/bin/python bench/quality/run.py            # load once, then query
    ALMANAC_DB_NAME=almanac_bench_quality .venv/bin/python bench/quality/run.py --reload   # rebuild the data
    ... run.py --quick       # a subset of the questions (the data is the same)
    ... run.py --sets a,b    # only some sets (the results file keeps the others' last numbers)

Calls only public entry points (memories.services.memory_create, memories.selectors
memory_search / nearest, almanac.search.keyword, the import_* commands, wiki_compile,
context.services.context_build, wiki.search.page_search), so it keeps working while the
ranking code changes. Writes bench/quality/results.json (or --out).
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_quality")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from almanac.embedding_columns import second_fill  # noqa: E402
from almanac.models import Tenant  # noqa: E402
from almanac.search import keyword, second  # noqa: E402
from almanac.search.embeddings import embed, embed_query  # noqa: E402
from almanac.services.tenancy import tenant_create  # noqa: E402
from almanac.services.users import user_create  # noqa: E402
from bench.quality import company, company_orders, contracts, conversations, crosslang, dialogues_zh  # noqa: E402
from memories.models import CORPUS, Memory  # noqa: E402
from memories.selectors import SEARCH_TYPES, memory_search, nearest  # noqa: E402
from memories.services.memories import memory_create  # noqa: E402

KS = (1, 5, 10)
TENANT_A, TENANT_B = "qconv", "qzh"
MANIFEST_VERSION = 1
NONSENSE = {
    "en": ["ZZQX-nothing-qqq xylophone quasar", "blorft wizzle snarkum", "qwpoeiru zxmcnv lkjhg"],
    "zh": ["啊咧咧嘟嘟嘀嘀咕", "氪锶钫铪镥镓 嗷呜", "叽里呱啦 咕噜咕噜 嘶"],
}


def log(message: str) -> None:
    print(message, flush=True)


# --- loading -------------------------------------------------------------------------------


def manifest_path() -> Path:
    return ROOT / "var" / "bench_quality" / f"manifest-{settings.DATABASES['default']['NAME']}.json"


def fresh_tenant(slug: str, name: str) -> Tenant:
    from django.contrib.auth import get_user_model

    old = Tenant.objects.filter(slug=slug).first()
    if old is not None:
        get_user_model().objects.filter(profile__tenant=old).delete()
        old.delete()
    return tenant_create(slug=slug, name=name)[0]


def write_memories(user, rows: list[dict], *, memory_type: str) -> dict[str, int]:
    """memory_create for each row ({id, content, occurred_at?}); bench id -> memory id (a
    near-duplicate the write path folds into an earlier memory maps to that one)."""
    vectors = embed([r["content"] for r in rows])
    ids = {}
    for row, vector in zip(rows, vectors, strict=True):
        memory, _ = memory_create(
            owner=user, content=row["content"], memory_type=memory_type, occurred_at=row.get("occurred_at"),
            meta={"bench_id": row["id"]}, embedding=vector, reason="bench",
        )  # fmt: skip
        ids[row["id"]] = memory.pk
    return ids


def load_a(data: dict) -> dict[str, int]:
    tenant = fresh_tenant(TENANT_A, "Quality bench: conversations")
    ids = {}
    for conv in data["conversations"]:
        user = user_create(tenant=tenant, username=conv["owner"])
        rows = [
            {
                "id": t["id"],
                "content": f"{t['speaker']}: {t['text']}",
                "occurred_at": date.fromisoformat(s["date"]),
            }
            for s in conv["sessions"]
            for t in s["turns"]
        ]
        ids.update(write_memories(user, rows, memory_type=Memory.Type.EPISODIC))
    return ids


def load_b(data: dict) -> dict[str, int]:
    tenant = fresh_tenant(TENANT_B, "Quality bench: dialogue memories")
    ids = {}
    for u in data["users"]:
        user = user_create(tenant=tenant, username=u["name"])
        ids.update(write_memories(user, u["memories"], memory_type=Memory.Type.SEMANTIC))
    return ids


def load_c() -> None:
    settings.WIKI_SUMMARY_ENABLED = False  # no LLM here: the offline summary is not what we measure
    tenant = fresh_tenant(company.TENANT, "Kestrel Systems")
    for username, name, dept, projects, _ in company.PEOPLE:
        user_create(
            tenant=tenant, username=username, email=f"{username}@{company.DOMAIN}", departments=[dept],
            projects=projects, display_name=name,
        )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for command, paths in company.write_exports(Path(folder)).items():
            for path in paths:
                call_command(command, str(path), tenant=company.TENANT, no_progress=True, verbosity=0)
    call_command("wiki_compile", company.TENANT, verbosity=0)


def ensure_loaded(sets: str, reload: bool, data_a: dict, data_b: dict) -> dict:
    path = manifest_path()
    manifest = json.loads(path.read_text()) if path.exists() and not reload else {}
    if manifest.get("version") != MANIFEST_VERSION:
        manifest = {"version": MANIFEST_VERSION}
    slugs = [TENANT_A, TENANT_B, company.TENANT, crosslang.TENANT]
    present = {t.slug for t in Tenant.objects.filter(slug__in=slugs)}
    started = time.perf_counter()
    if "a" in sets and (reload or "a" not in manifest or TENANT_A not in present):
        log("loading set (a): conversations ...")
        manifest["a"] = load_a(data_a)
    if "b" in sets and (reload or "b" not in manifest or TENANT_B not in present):
        log("loading set (b): dialogue memories ...")
        manifest["b"] = load_b(data_b)
    if "c" in sets and (reload or "c" not in manifest or company.TENANT not in present):
        log("loading set (c): company exports ...")
        load_c()
        manifest["c"] = True
    if "e" in sets and (reload or "e" not in manifest or crosslang.TENANT not in present):
        log("loading set (e): cross-language notes ...")
        manifest["e"] = crosslang.load(fresh_tenant, write_memories)
    if second.enabled() and set(sets) & set("abe"):  # no task worker here: fill the second lane now
        log(f"second encoder: {second_fill(Memory)} memories embedded")
    if time.perf_counter() - started > 1:
        log(f"loaded in {time.perf_counter() - started:.0f}s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))
    return manifest


# --- memory lanes --------------------------------------------------------------------------


def user_by_name(username: str):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.select_related("profile").get(username=username)


class Lanes:
    """Each lane over the same visible set memory_search uses: (ids, top score) per query."""

    def __init__(self, user):
        self.user = user
        self.tenant_id = user.profile.tenant_id
        self.qs = Memory.objects.visible_to(user).filter(memory_type__in=list(SEARCH_TYPES))
        rows = list(self.qs.values_list("id", "embedding"))
        self.ids = np.array([r[0] for r in rows])
        self.matrix = np.array([np.asarray(r[1], dtype=np.float32) for r in rows])

    def keyword(self, query: str, k: int = 10):
        kq = keyword.keyword_query(tenant_id=self.tenant_id, corpus=CORPUS, text=query)
        top = keyword.top(self.qs, kq, size=k, common_share=settings.MEMORY_COMMON_TERM_SHARE)
        return [r[0] for r in top], (float(top[0][1]) if top else None)

    def vector(self, query: str, k: int = 10):
        top = nearest(self.qs, embed_query(query), k, tenant_id=self.tenant_id)
        return [pk for pk, _ in top], (1 - float(top[0][1]) if top else None)

    def exact(self, query: str, k: int = 10):
        sims = self.matrix @ embed_query(query)
        order = np.argsort(-sims)[:k]
        return [int(self.ids[i]) for i in order], (float(sims[order[0]]) if len(order) else None)

    def second(self, query: str, k: int = 10):
        """The second encoder alone (SEARCH_SECOND_ENCODER), over every memory it has embedded."""
        qs = self.qs.filter(embedding_e5__isnull=False)
        top = nearest(qs, second.embed_query(query), k, tenant_id=self.tenant_id, field="embedding_e5")
        return [pk for pk, _ in top], (1 - float(top[0][1]) if top else None)

    def pipeline(self, query: str, k: int = 10):
        hits = memory_search(user=self.user, query=query, top_k=k)
        return [h.memory.pk for h in hits], (float(hits[0].score) if hits else None)


LANES = (
    ("keyword", "vector", "exact", "second", "pipeline")
    if second.enabled()
    else ("keyword", "vector", "exact", "pipeline")
)


def rank_metrics(ranked: list[int], gold: set[int]) -> dict:
    out = {f"r@{k}": len(gold & set(ranked[:k])) / len(gold) for k in KS}
    first = next((i for i, pk in enumerate(ranked) if pk in gold), None)
    out["mrr"] = 0.0 if first is None else 1 / (first + 1)
    return out


def summarize(rows: list[dict]) -> dict:
    if not rows:
        return {}
    keys = rows[0].keys()
    return {k: round(statistics.fmean(r[k] for r in rows), 3) for k in keys} | {"n": len(rows)}


def separation(answerable: list[float | None], unanswerable: list[float | None]) -> dict:
    """Top-1 scores of queries with and without an answer: how well a floor could split them."""
    a = [s for s in answerable if s is not None]
    u = [s for s in unanswerable if s is not None]
    out = {"answerable_top1_median": _q(a, 0.5), "answerable_top1_p10": _q(a, 0.1),
           "unanswerable_top1_median": _q(u, 0.5), "unanswerable_top1_p90": _q(u, 0.9)}  # fmt: skip
    if a and u:  # AUC: share of (answerable, unanswerable) pairs ordered right by top-1 score
        out["auc"] = round(sum((x > y) + 0.5 * (x == y) for x in a for y in u) / (len(a) * len(u)), 3)
    return out


def _q(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return round(float(np.quantile(values, q)), 4)


def eval_memories(queries: list[dict], *, user_of, text_of, gold_of, category_of) -> dict:
    """Per lane: recall@k / MRR over the answerable queries, by category, plus top-1 score
    separation and result counts for the unanswerable ones."""
    lanes_by_user: dict[str, Lanes] = {}
    per = {lane: [] for lane in LANES}
    details = []
    for q in queries:
        username = user_of(q)
        if username not in lanes_by_user:
            lanes_by_user[username] = Lanes(user_by_name(username))
        lanes = lanes_by_user[username]
        gold = gold_of(q)
        row = {"id": q["id"], "category": category_of(q)}
        for lane in LANES:
            ranked, top1 = getattr(lanes, lane)(text_of(q))
            metrics = rank_metrics(ranked, gold) if gold else {}
            per[lane].append((row["category"], metrics, top1, len(ranked)))
            first = next((i + 1 for i, pk in enumerate(ranked) if pk in gold), None)
            row[lane] = {"rank": first, "top1": None if top1 is None else round(top1, 4)}
        details.append(row)
    result = {}
    for lane, rows in per.items():
        answerable = [m for _, m, _, _ in rows if m]
        cats = sorted({c for c, m, _, _ in rows if m})
        result[lane] = {
            "all": summarize(answerable),
            "by_category": {c: summarize([m for cc, m, _, _ in rows if cc == c and m]) for c in cats},
            "floor": separation([t for _, m, t, _ in rows if m], [t for _, m, t, _ in rows if not m]),
            "unanswerable_returned_mean": round(
                statistics.fmean([n for _, m, _, n in rows if not m] or [0]), 2
            ),
        }
    return {"lanes": result, "queries": details}


def _quick(queries: list[dict], answerable) -> list[dict]:
    """Every fourth answerable query and all the unanswerable ones (the floor needs them)."""
    return [q for i, q in enumerate(queries) if i % 4 == 0 or not answerable(q)]


def run_a(data: dict, ids: dict, quick: bool) -> dict:
    questions = _quick(data["questions"], lambda q: q["evidence"]) if quick else data["questions"]
    owners = {c["id"]: c["owner"] for c in data["conversations"]}
    return eval_memories(
        questions,
        user_of=lambda q: owners[q["conv"]],
        text_of=lambda q: q["question"],
        gold_of=lambda q: {ids[e] for e in q["evidence"]},
        category_of=lambda q: q["category"],
    )


def run_b(data: dict, ids: dict, quick: bool) -> dict:
    queries = _quick(data["queries"], lambda q: q["target"]) if quick else data["queries"]
    return eval_memories(
        queries,
        user_of=lambda q: q["user"],
        text_of=lambda q: q["dialogue"],
        gold_of=lambda q: {ids[q["target"]]} if q["target"] else set(),
        category_of=lambda q: q["category"],
    )


# --- company context -----------------------------------------------------------------------


LABEL_RE = re.compile(r"^\[[^\]]*\]$")
ITEM_START_RE = re.compile(r"^(\[|- |\w+: )")


def prompt_items(prompt: str) -> list[str]:
    """The prompt's items: a line that opens with a source or date tag ("[slack #sales]
    [2026-01-06] ...", "[2026-01-13] ..."), a list dash (memories) or a role ("user: ...")
    and the continuation lines under it ("When: ...", the rest of an e-mail). Block labels
    ("[Company knowledge]") and page headers ("## Globex (sources: ...)") are no items."""
    items: list[list[str]] = []
    for line in prompt.splitlines():
        s = line.strip()
        if not s or LABEL_RE.match(s) or s.startswith("#"):
            continue
        if ITEM_START_RE.match(s) and not s.startswith(("When:", "Attendees:")) or not items:
            items.append([s])
        else:
            items[-1].append(s)
    return ["\n".join(i) for i in items]


def bears_on(item: str, task: dict) -> bool:
    """Precision proxy: an item bears on the task if it holds a needed string or names one
    of the task's entities (customer/project names and their aliases, or the topic words)."""
    low = item.lower()
    return any(s.lower() in low for s in task["needs"] + task["entities"])


def precision_counts(items: list[str], task: dict) -> tuple[int, int]:
    """(items that bear on the task and were not printed before in this prompt, duplicates)."""
    seen, relevant, duplicates = set(), 0, 0
    for item in items:
        key = re.sub(r"^\[[^\]]*\]\s*", "", item)  # the same text under another page's tag
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        relevant += bears_on(item, task)
    return relevant, duplicates


def _no_touch() -> dict:
    """touch=False where the context call takes it: a benchmark must not reinforce itself."""
    from context import services

    return {"touch": False} if "touch" in inspect.signature(services.context_for).parameters else {}


def run_c(quick: bool) -> dict:
    from context.services import context_build
    from wiki.search import page_search

    tenant = Tenant.objects.get(slug=company.TENANT)
    tasks = company.TASKS[::3] if quick else company.TASKS
    rows, details = [], []
    for t in tasks + company.NOTHING_TASKS:
        user = user_by_name(t["user"])
        ctx = context_build(user=user, tenant=tenant, task=t["task"], max_tokens=1500, **_no_touch())
        prompt = ctx["prompt"] or ""
        low = prompt.lower()
        items = prompt_items(prompt)
        relevant, duplicates = precision_counts(items, t)
        found = [s for s in t["needs"] if s.lower() in low]
        pages = page_search(user=user, query=t["task"], top_k=5)
        page_text = "\n".join(h.section.content for p in pages for h in p["hits"]).lower()
        page_text += "\n" + "\n".join(p["page"].title for p in pages).lower()
        row = {
            "user": t["user"], "task": t["task"], "nothing": t in company.NOTHING_TASKS,
            "fact_recall": len(found) / len(t["needs"]) if t["needs"] else None,
            "missing": [s for s in t["needs"] if s not in found],
            "leaks": [s for s in t["private"] if s.lower() in low],
            "foreign": [s for s in t["foreign"] if s.lower() in low],
            "items": len(items), "relevant_items": relevant, "duplicate_items": duplicates,
            "tokens": ctx["budget"]["used"], "warnings": len(ctx["warnings"]),
            "wiki_recall": (sum(s.lower() in page_text for s in t["needs"]) / len(t["needs"])) if t["needs"] else None,
            "wiki_leaks": [s for s in t["private"] if s.lower() in page_text], "pages": len(pages),
        }  # fmt: skip
        rows.append(row)
        details.append(row)
    real = [r for r in rows if not r["nothing"]]
    with_needs = [r for r in real if r["fact_recall"] is not None]
    precision = [r["relevant_items"] / r["items"] for r in real if r["items"]]
    nothing = [r for r in rows if r["nothing"]]
    return {
        "tasks": len(real),
        "context_fact_recall": round(statistics.fmean(r["fact_recall"] for r in with_needs), 3),
        "context_all_facts": round(statistics.fmean(r["fact_recall"] == 1 for r in with_needs), 3),
        "leaks": sum(len(r["leaks"]) for r in real),
        "foreign_facts_per_task": round(statistics.fmean(len(r["foreign"]) for r in real), 2),
        "context_precision": round(statistics.fmean(precision), 3) if precision else None,
        "duplicate_item_share": round(
            sum(r["duplicate_items"] for r in real) / max(1, sum(r["items"] for r in real)), 3
        ),
        "tokens_mean": round(statistics.fmean(r["tokens"] for r in real)),
        "wiki_search_recall@5": round(statistics.fmean(r["wiki_recall"] for r in with_needs), 3),
        "wiki_search_leaks": sum(len(r["wiki_leaks"]) for r in real),
        "nothing_tasks": [
            {"task": r["task"], "items": r["items"], "pages": r["pages"], "warnings": r["warnings"]}
            for r in nothing
        ],
        "by_language": {
            lang: round(
                statistics.fmean(r["fact_recall"] for r in with_needs if _is_zh(r["task"]) == (lang == "zh")),
                3,
            )
            for lang in ("en", "zh")
        },
        "details": details,
    }


def _is_zh(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# --- nonsense ------------------------------------------------------------------------------


def run_nonsense(sets: str) -> dict:
    from context.services import context_build
    from wiki.search import page_search

    users = []
    if "a" in sets:
        users.append(("a", conversations.build()["conversations"][0]["owner"]))
    if "b" in sets:
        users.append(("b", "zh_user0"))
    if "c" in sets:
        users.append(("c", "anna"))
    out = []
    for lang, queries in NONSENSE.items():
        for query in queries:
            row = {"lang": lang, "query": query}
            for key, username in users:
                user = user_by_name(username)
                row[f"memories_{key}"] = len(memory_search(user=user, query=query, top_k=10))
                if key == "c":
                    row["pages_c"] = len(page_search(user=user, query=query, top_k=10))
                    ctx = context_build(
                        user=user, tenant=user.profile.tenant, task=query, max_tokens=1500, **_no_touch()
                    )
                    row["context_items_c"] = len(prompt_items(ctx["prompt"] or ""))
                    row["context_warnings_c"] = len(ctx["warnings"])
            out.append(row)
    return {"queries": out}


# --- report --------------------------------------------------------------------------------


def table(name: str, result: dict) -> str:
    lines = [
        f"\n{name}",
        f"  {'lane':<9} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'n':>4}   floor AUC  unans.returned",
    ]
    for lane, r in result["lanes"].items():
        a = r["all"]
        lines.append(
            f"  {lane:<9} {a['r@1']:>6.3f} {a['r@5']:>6.3f} {a['r@10']:>6.3f} {a['mrr']:>6.3f} {a['n']:>4}   "
            f"{r['floor'].get('auc', float('nan')):>9.3f}  {r['unanswerable_returned_mean']:>6.1f}"
        )
    cats = result["lanes"]["pipeline"]["by_category"]
    lines.append(f"  by category, R@10 ({' / '.join(LANES)}):")
    for c in cats:
        vals = " / ".join(f"{result['lanes'][lane]['by_category'][c]['r@10']:.3f}" for lane in LANES)
        lines.append(f"    {c:<14} {vals}   (n={cats[c]['n']})")
    return "\n".join(lines)


def report(results: dict) -> str:
    out = []
    if "a" in results:
        out.append(table("(a) English long conversations: evidence recall", results["a"]))
    if "b" in results:
        out.append(table("(b) Chinese dialogue memories: target recall", results["b"]))
    if "c" in results and "tasks" in results["c"]:
        c = results["c"]
        out.append(
            f"\n(c) Company context ({c['tasks']} tasks, max_tokens=1500)\n"
            f"  fact recall {c['context_fact_recall']:.3f} (en {c['by_language']['en']:.3f}, zh {c['by_language']['zh']:.3f}); "
            f"all facts {c['context_all_facts']:.3f}; precision {c['context_precision']:.3f} "
            f"(duplicate items {c['duplicate_item_share']:.3f}); "
            f"leaks {c['leaks']}; foreign facts/task {c['foreign_facts_per_task']}; tokens {c['tokens_mean']}\n"
            f"  wiki search recall@5 {c['wiki_search_recall@5']:.3f}; wiki search leaks {c['wiki_search_leaks']}\n"
            "  nothing to find: "
            + "; ".join(f"{n['task'][:32]!r}: {n['items']} items, {n['pages']} pages, {n['warnings']} warnings" for n in c["nothing_tasks"])
        )  # fmt: skip
    if "d" in results:
        out.append(company_orders.report(results["d"]))
    if "e" in results:
        out.append(crosslang.report(results["e"]))
    if "f" in results:
        out.append(contracts.report(results["f"]))
    if results.get("nonsense", {}).get("queries"):
        out.append("\nNonsense queries (results returned):")
        for row in results["nonsense"]["queries"]:
            rest = ", ".join(f"{k}={v}" for k, v in row.items() if k not in ("lang", "query"))
            out.append(f"  [{row['lang']}] {row['query'][:34]:<34} {rest}")
    return "\n".join(out)


def code_version() -> str:
    """The commit measured, and whether the ranking code had uncommitted changes then."""
    import subprocess

    def git(*a):
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    dirty = git("status", "--porcelain", "--", "almanac/search", "memories", "wiki", "context")
    return git("rev-parse", "--short", "HEAD") + (" + uncommitted ranking changes" if dirty else "")


def keep_earlier(results: dict, path: Path, sets: str) -> None:
    """A run of some sets keeps the other sets' last numbers in the results file, and
    `code_by_set` says which commit measured each."""
    old = json.loads(path.read_text()) if path.exists() else {}
    code_by_set = old.get("code_by_set") or {k: old.get("code") for k in "abc" if k in old}
    for key in "abcdef":
        if key in sets:
            code_by_set[key] = results["code"]
        elif key in old:
            results[key] = old[key]
            results.setdefault("seconds", {}).setdefault(key, old.get("seconds", {}).get(key))
    if "nonsense" not in results and "nonsense" in old:
        results["nonsense"] = old["nonsense"]
    results["code_by_set"] = code_by_set


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reload", action="store_true", help="rebuild the data of the chosen sets")
    parser.add_argument("--quick", action="store_true", help="a quarter of the questions")
    parser.add_argument("--sets", default="abcde", help="which sets: any of a, b, c, d, e, f (default abcde)")
    parser.add_argument(
        "--out", default=None, help="results file (default bench/quality/results.json; quick: none)"
    )
    parser.add_argument("--details", action="store_true", help="keep per-query rows in the results file")
    parser.add_argument("--orders", default="before,during,after", help="set (d): which arrival orders")
    args = parser.parse_args()
    sets = args.sets.replace(",", "")
    logging.getLogger("django-q").setLevel(logging.WARNING)  # one line per enqueued compile task
    call_command("migrate", verbosity=0)
    data_a, data_b = conversations.build(), dialogues_zh.build()
    manifest = ensure_loaded(sets, args.reload, data_a, data_b)
    embed(["warm up"])
    results: dict = {"database": settings.DATABASES["default"]["NAME"], "quick": args.quick, "code": code_version(),
                     "embedding_backend": settings.EMBEDDING_BACKEND}  # fmt: skip
    timings = {}
    for key, fn in (("a", lambda: run_a(data_a, manifest["a"], args.quick)),
                    ("b", lambda: run_b(data_b, manifest["b"], args.quick)),
                    ("c", lambda: run_c(args.quick)),
                    ("d", lambda: company_orders.run(quick=args.quick, reload=args.reload, no_touch=_no_touch(),
                                                     details=args.details, orders=args.orders)),
                    ("e", lambda: crosslang.run(eval_memories, _no_touch(), manifest["e"])),
                    ("f", lambda: contracts.run(quick=args.quick))):  # fmt: skip
        if key in sets:
            started = time.perf_counter()
            results[key] = fn()
            if key in "abe":  # memory recall: with or without the second vector lane
                results[key]["second_encoder"] = settings.SEARCH_SECOND_ENCODER or "off"
            timings[key] = round(time.perf_counter() - started, 1)
    if set(sets) & set("abc"):
        results["nonsense"] = run_nonsense(sets)
    results["seconds"] = timings
    log(report(results))
    log(f"\nquery pass: {timings}s")
    if not args.details:
        for key in ("a", "b"):
            if key in results:
                results[key].pop("queries", None)
        if "c" in results:
            results["c"]["details"] = [
                {
                    k: r[k]
                    for k in (
                        "user",
                        "task",
                        "fact_recall",
                        "missing",
                        "leaks",
                        "foreign",
                        "items",
                        "relevant_items",
                        "duplicate_items",
                    )
                }
                for r in results["c"]["details"]
            ]
    out = args.out or (None if args.quick else str(Path(__file__).with_name("results.json")))
    if out:
        keep_earlier(results, Path(out), sets)
        Path(out).write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n")
        log(f"wrote {out}")


if __name__ == "__main__":
    main()
