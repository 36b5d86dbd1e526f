"""Bulk data for the context benchmark: wiki sections and memories at scale, fast.

    ALMANAC_DB_NAME=almanac_bench_ctx .venv/bin/python bench/context/generate.py \
        --sections 50000 --memories 100000

The texts, people, channels and ACLs come from the wiki benchmark's generator
(`bench.wiki.generate`: Slack/e-mail/GitHub/calendar/notes, public and private, en+zh).
Running every event through the compiler (one transaction and one embedding per event)
would take hours at this size, so this loader writes what the compiler would produce
directly: one section per content event on the page of its customer/project tag (or the
container's topic page), with the container's ACL and provenance, embeddings computed in
batches, keyword statistics rebuilt once. Events are stored too (state `compiled`), so
source freshness reads a realistic inbox. Memories: semantic and episodic, scoped to a
user (most), their project or their department, with batched embeddings; a pool of
distinct texts is shared across owners (each text embedded once).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_ctx")

CONTENT_KINDS = {
    "message",
    "message_changed",
    "email",
    "issue",
    "pull_request",
    "calendar_event",
    "meeting_note",
}
TENANT = "benchctx"

MEMORY_EN = [
    "{u} prefers proposals for {c} to lead with pricing and a one-page summary",
    "{c} asked for a {n}% discount on the {p} renewal; finance approved {m}%",
    "Met {c} on {d} to review the {p} rollout; next step is a security review",
    "{c} champion changed jobs; the new contact owns budget for {p}",
    "The {p} team uses Jira for planning and Slack for incidents",
    "{u} is allergic to long meetings; keep {p} syncs under {n} minutes",
    "Signed the {c} order form on {d} for {n}k, term {m} months",
    "{c} escalated a P1 incident on {d}; root cause was the {p} migration",
]
MEMORY_ZH = [
    "{u} 希望给{c}的方案先讲价格，再给一页摘要",
    "{c} 要求{p}续约打{n}折，财务批准{m}%",
    "{d} 和{c}开会复盘{p}上线，下一步安全评审",
    "{c} 的对接人换了，新的联系人负责{p}预算",
    "{d} 与{c}签订订单，金额{n}万，期限{m}个月",
]


def fresh_tenant():
    from almanac.models import Tenant
    from almanac.services.tenancy import tenant_create

    Tenant.objects.filter(slug=TENANT).delete()
    return tenant_create(slug=TENANT, name="Bench Context Co")[0]


class Embedder:
    """Embeds each distinct text once, in batches."""

    def __init__(self):
        self.cache: dict[str, object] = {}

    def prime(self, texts: list[str], label: str) -> None:
        from almanac.search.embeddings import embed

        todo = list(dict.fromkeys(t for t in texts if t not in self.cache))
        started = time.monotonic()
        for i in range(0, len(todo), 512):
            chunk = todo[i : i + 512]
            for text, vector in zip(chunk, embed(chunk, batch_size=256), strict=True):
                self.cache[text] = vector
            done = i + len(chunk)
            rate = done / max(time.monotonic() - started, 1e-6)
            print(f"  embedded {done}/{len(todo)} {label} texts ({rate:.0f}/s)", end="\r", flush=True)
        print()


def _page_for(tenant, payload, pages: dict):
    from wiki.models import Entity
    from wiki.services.entities import entity_ensure

    tags = payload.get("tags") or {}
    if tags.get("customer"):
        kind, name = Entity.Kind.CUSTOMER, tags["customer"]
    elif tags.get("project"):
        kind, name = Entity.Kind.PROJECT, tags["project"]
    else:
        kind, name = Entity.Kind.TOPIC, payload["container"].get("name") or payload["container"]["key"]
    key = (kind, name)
    if key not in pages:
        pages[key] = entity_ensure(tenant=tenant, kind=kind, name=name).page
    return pages[key]


def _memberships(tenant, payloads: list[dict], users_by_email: dict) -> None:
    from almanac.services.tenancy import group_ensure, membership_add

    seen: set[tuple[str, str]] = set()
    for payload in payloads:
        container = payload["container"]
        group = None
        for email in container.get("members") or []:
            if (container["key"], email) in seen or email not in users_by_email:
                continue
            seen.add((container["key"], email))
            group = group or group_ensure(
                tenant=tenant,
                key=container["key"],
                kind="source",
                name=container.get("name", ""),
                builtin=False,
            )
            membership_add(user=users_by_email[email], group=group, origin="bench")


def _events(tenant, payloads: list[dict]) -> None:
    from connectors.models import Event
    from connectors.services.sources import source_ensure, sync_success

    sources = {}
    rows = []
    for p in payloads:
        if p["source"] not in sources:
            sources[p["source"]] = source_ensure(tenant=tenant, name=p["source"])
        rows.append(
            Event(
                tenant=tenant,
                source=sources[p["source"]],
                external_id=p["external_id"],
                version=p["version"],
                kind=p["kind"],
                occurred_at=datetime.fromisoformat(p["occurred_at"]),
                container_key=p["container"]["key"],
                container_name=p["container"].get("name", ""),
                container_members=p["container"].get("members"),
                container_public=p["container"].get("public", False),
                thread_key=p["thread_key"],
                author=p["author"],
                title=p["title"],
                text=p["text"],
                tags=p.get("tags") or {},
                url=p.get("url", ""),
                state="compiled",
            )
        )
    Event.objects.bulk_create(rows, batch_size=2000, ignore_conflicts=True)
    for source in sources.values():
        sync_success(source=source)


def _payloads(tenant, n: int, seed: int, chunk: int = 2000) -> list[dict]:
    """Content events from the wiki generator, made in chunks (its cost grows with the
    square of one call's size), ids prefixed per chunk so they stay unique."""
    from bench.wiki.generate import generate

    out: list[dict] = []
    part = 0
    while len(out) < n:
        for p in generate(tenant, chunk, seed=seed * 1000 + part):
            if p["kind"] in CONTENT_KINDS and p["text"]:
                p["external_id"] = f"c{part}-{p['external_id']}"
                p["thread_key"] = f"c{part}-{p['thread_key']}"
                out.append(p)
        part += 1
        print(f"  generated {min(len(out), n)}/{n} events", end="\r", flush=True)
    print()
    return out[:n]


def load_sections(tenant, n_sections: int, embedder: Embedder, seed: int) -> int:
    from almanac.search import keyword
    from wiki.models import PageSection

    payloads = _payloads(tenant, n_sections, seed)
    from django.contrib.auth import get_user_model

    users = {u.email: u for u in get_user_model().objects.filter(profile__tenant=tenant)}
    _memberships(tenant, payloads, users)
    _events(tenant, payloads)
    embedder.prime([f"{p['title']}\n{p['text']}" for p in payloads], "section")
    pages: dict = {}
    rows = []
    for i, p in enumerate(payloads):
        page = _page_for(tenant, p, pages)
        when = datetime.fromisoformat(p["occurred_at"])
        container = p["container"]
        acl = [container["key"]] + ([tenant.group_key] if container.get("public") else [])
        content = f"[{when:%Y-%m-%d}] {p['author']}: {p['text']}"
        fields = keyword.index_fields(f"{page.title}\n{p['title']}\n{content}")
        rows.append(
            PageSection(
                tenant=tenant,
                page=page,
                thread_key=f"{p['thread_key']}#{i}",
                container_key=container["key"],
                container_name=container.get("name", ""),
                title=p["title"][:500],
                content=content,
                occurred_at=when,
                acl=acl,
                authors=[p["author"]],
                source_list=[
                    {"source": p["source"], "url": p.get("url", ""), "occurred_at": p["occurred_at"]}
                ],
                embedding=embedder.cache[f"{p['title']}\n{p['text']}"],
                **fields,
            )
        )
    started = time.monotonic()
    for i in range(0, len(rows), 2000):
        PageSection.objects.bulk_create(rows[i : i + 2000])
        print(f"  inserted {min(i + 2000, len(rows))}/{len(rows)} sections", end="\r", flush=True)
    print(f"\n  sections inserted in {time.monotonic() - started:.0f}s on {len(pages)} pages")
    keyword.stats_rebuild(
        tenant_id=tenant.pk, corpus="wiki", queryset=PageSection.objects.filter(tenant=tenant)
    )
    return len(rows)


def _memory_texts(n: int, rng: random.Random, people: list[str]) -> list[str]:
    from bench.wiki.generate import CUSTOMERS, PROJECTS

    texts = set()
    while len(texts) < n:
        template = rng.choice(MEMORY_ZH if rng.random() < 0.35 else MEMORY_EN)
        day = (date(2025, 1, 1) + timedelta(days=rng.randint(0, 700))).isoformat()
        texts.add(
            template.format(
                u=rng.choice(people),
                c=rng.choice(CUSTOMERS),
                p=rng.choice(PROJECTS),
                n=rng.randint(2, 90),
                m=rng.randint(1, 60),
                d=day,
            )  # fmt: skip
        )
    return sorted(texts)


def load_memories(tenant, n_memories: int, distinct: int, embedder: Embedder, seed: int) -> int:
    from django.contrib.auth import get_user_model

    from almanac.search import keyword
    from memories.models import Memory

    rng = random.Random(seed)
    users = list(
        get_user_model()
        .objects.filter(profile__tenant=tenant)
        .prefetch_related("profile__projects", "profile__departments")
        .order_by("id")
    )
    texts = _memory_texts(min(distinct, n_memories), rng, [u.username for u in users])
    embedder.prime(texts, "memory")
    index = {t: keyword.index_fields(t) for t in texts}
    now = datetime.now(UTC)
    rows = []
    for i in range(n_memories):
        text = texts[i % len(texts)]
        owner = users[rng.randrange(len(users))]
        r = rng.random()
        if r < 0.15 and owner.profile.projects.all():
            scope, scope_key = "project", rng.choice(list(owner.profile.projects.all())).key
        elif r < 0.22 and owner.profile.departments.all():
            scope, scope_key = "dept", rng.choice(list(owner.profile.departments.all())).key
        else:
            scope, scope_key = "user", owner.username
        episodic = rng.random() < 0.5
        rows.append(
            Memory(
                tenant=tenant,
                owner=owner,
                scope=scope,
                scope_key=scope_key,
                memory_type="episodic" if episodic else "semantic",
                content=text,
                embedding=embedder.cache[text],
                importance=round(rng.uniform(0.1, 1.0), 2),
                occurred_at=(date(2025, 1, 1) + timedelta(days=rng.randint(0, 700))) if episodic else None,
                last_access=now - timedelta(days=rng.randint(0, 200)),
                acl=[Memory.acl_key(scope, scope_key)],
                **index[text],
            )  # fmt: skip
        )
    started = time.monotonic()
    for i in range(0, len(rows), 2000):
        Memory.objects.bulk_create(rows[i : i + 2000])
        print(f"  inserted {min(i + 2000, len(rows))}/{len(rows)} memories", end="\r", flush=True)
    print(f"\n  memories inserted in {time.monotonic() - started:.0f}s")
    keyword.stats_rebuild(tenant_id=tenant.pk, corpus="memory", queryset=Memory.objects.filter(tenant=tenant))
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", type=int, default=50_000)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--distinct-memory-texts", type=int, default=25_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from bench.wiki.generate import ensure_users

    started = time.monotonic()
    tenant = fresh_tenant()
    ensure_users(tenant)
    embedder = Embedder()
    sections = load_sections(tenant, args.sections, embedder, args.seed)
    memories = load_memories(tenant, args.memories, args.distinct_memory_texts, embedder, args.seed)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"tenant {TENANT}: {sections} sections, {memories} memories in {time.monotonic() - started:.0f}s")


if __name__ == "__main__":
    main()
