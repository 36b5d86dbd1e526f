"""Synthetic company history for benchmarks: Slack, e-mail, GitHub, calendar and notes events.

`generate(tenant, n_events, seed=0)` returns `n_events` normalized event payloads (the
the shape of docs/api.md (Connectors), ready for `connectors.services.ingest.event_ingest_batch`) spread
over customers,
projects, public and private channels, in English and Chinese, with edits, deletions,
recalls and closed issues mixed in. `ensure_users(tenant)` creates the people they
mention. `load(tenant, n_events)` does both, ingests and compiles (for other benchmarks
that need a filled wiki, e.g. the context benchmark's 50k sections).
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

CUSTOMERS = [
    "Vercel Inc.", "Stripe", "Datadog", "Snowflake", "Notion Labs", "Figma", "Airtable", "Canva",
    "Shopify", "Atlassian", "Twilio", "Cloudflare", "HashiCorp", "GitLab", "Miro", "Zendesk",
    "华为技术有限公司", "宁德时代", "字节跳动", "美团", "小米集团", "比亚迪股份有限公司", "腾讯", "京东",
    "阿里巴巴集团", "蔚来", "大疆创新", "海尔集团", "联想集团", "顺丰速运",
]  # fmt: skip
PROJECTS = ["Apollo", "Zephyr", "Hermes", "Atlas", "Orion", "Phoenix", "Nebula", "Titan"]
N_PEOPLE = 24


def people(tenant) -> list[str]:
    """Usernames are global in Django, so each tenant gets its own."""
    return [f"{tenant.slug}-u{i:02d}" for i in range(N_PEOPLE)]


PUBLIC_CHANNELS = ["general", "sales", "engineering", "support", "product"]
PRIVATE_CHANNELS = ["finance-internal", "exec", "deals-private", "legal", "hr-private"]

EN = [
    "{c} wants to expand to {n} seats before {d}",
    "Call with {c}: they asked about SSO and audit logs for {p}",
    "{c} renewal is at risk, budget cut by {n}%",
    "Pricing for {c}: list {n}k, floor {m}k, approval needed",
    "{p} milestone slipped a week because of the data migration",
    "Shipped the {p} export feature, {c} is the first user",
    "{c} reported latency spikes in the EU region during {p} rollout",
    "Legal review of the {c} MSA is done, redlines on clause {n}",
    "Invoice INV-{n}-{m} for {c} is overdue by {n} days",
    "Weekly sync on {p}: hiring two engineers, demo to {c} on {d}",
]
ZH = [
    "{c} 希望在{d}之前扩容到{n}个席位",
    "和{c}开会：他们关心{p}的单点登录和审计日志",
    "{c} 续约有风险，预算削减{n}%",
    "{c} 报价：标价{n}万，底价{m}万，需要审批",
    "{p} 里程碑延期一周，原因是数据迁移",
    "{p} 导出功能上线，{c} 是第一个用户",
    "{c} 反馈{p}上线期间华东区延迟升高",
    "{c} 的合同法务审核完成，第{n}条有修改",
]


def ensure_users(tenant) -> list:
    from almanac.services.users import user_create

    users = []
    for i, name in enumerate(people(tenant)):
        users.append(
            user_create(
                tenant=tenant,
                username=name,
                email=f"{name}@{tenant.slug}.example",
                departments=[["Sales", "Finance", "Engineering", "Support"][i % 4]],
                projects=[PROJECTS[i % len(PROJECTS)], PROJECTS[(i + 3) % len(PROJECTS)]],
            )
        )
    return users


class _Generator:
    def __init__(self, tenant, seed: int):
        self.tenant = tenant
        self.rng = random.Random(seed)
        self.start = datetime(2026, 1, 1, tzinfo=UTC)
        self.minute = 0
        self.items: list[dict] = []  # emitted content items (for edits/deletes/replies)
        self.by_source: dict[str, list[dict]] = {}
        self.by_container: dict[str, list[dict]] = {}
        self.issues: list[dict] = []
        self.seq = 0
        self.people = people(tenant)
        self.members = {ch: sorted(self.rng.sample(self.people, 4)) for ch in PRIVATE_CHANNELS}

    def email_of(self, person: str) -> str:
        return f"{person}@{self.tenant.slug}.example"

    def when(self) -> str:
        self.minute += self.rng.randint(1, 7)
        return (self.start + timedelta(minutes=self.minute)).isoformat()

    def text(self) -> tuple[str, dict]:
        rng = self.rng
        customer, project = rng.choice(CUSTOMERS), rng.choice(PROJECTS)
        template = rng.choice(ZH if rng.random() < 0.35 else EN)
        day = (self.start + timedelta(days=rng.randint(10, 400))).strftime("%Y-%m-%d")
        text = template.format(c=customer, p=project, n=rng.randint(2, 90), m=rng.randint(1, 60), d=day)
        tags = {}
        if rng.random() < 0.5:
            tags["customer"] = customer
        if rng.random() < 0.4:
            tags["project"] = project
        return text, tags

    def next_id(self) -> int:
        self.seq += 1
        return self.seq

    def slack_message(self) -> dict:
        rng = self.rng
        private = rng.random() < 0.25
        channel = rng.choice(PRIVATE_CHANNELS if private else PUBLIC_CHANNELS)
        author = rng.choice(self.members[channel] if private else self.people)
        ts = f"{1760000000 + self.next_id()}.000100"
        threads = self.by_container.get(f"slack:channel:{channel}", [])[-20:]
        thread = (
            rng.choice(threads)["thread_key"]
            if threads and rng.random() < 0.45
            else f"slack:thread:{channel}/{ts}"
        )
        text, tags = self.text()
        container = {"key": f"slack:channel:{channel}", "name": f"#{channel}", "public": not private}
        if private:
            container["members"] = [self.email_of(p) for p in self.members[channel]]
        return self.item(
            source="slack", external_id=f"{channel}/{ts}", kind="message", container=container,
            thread_key=thread, author=self.email_of(author), title="", text=text, tags=tags,
            url=f"https://example.slack.com/archives/{channel}/p{ts.replace('.', '')}",
        )  # fmt: skip

    def email(self) -> dict:
        rng = self.rng
        people = rng.sample(self.people, 3)
        text, tags = self.text()
        n = self.next_id()
        threads = self.by_source.get("email", [])[-10:]
        if threads and rng.random() < 0.4:
            parent = rng.choice(threads)
            container, thread, subject = parent["container"], parent["thread_key"], "Re: " + parent["title"]
        else:
            thread = f"email:thread:{n}"
            container = {"key": thread, "name": text[:60], "members": [self.email_of(p) for p in people]}
            subject = text[:60]
        return self.item(
            source="email", external_id=f"<{n}@mail.example>", kind="email", container=container,
            thread_key=thread, author=container["members"][0], title=subject, text=text, tags=tags, url="",
        )  # fmt: skip

    def issue(self, kind: str = "issue") -> dict:
        text, tags = self.text()
        project = tags.get("project") or self.rng.choice(PROJECTS)
        tags["project"] = project
        n = self.next_id()
        repo = f"acme/{project.lower()}"
        event = self.item(
            source="github", external_id=f"{repo}#{n}", kind=kind,
            container={"key": f"github:repo:{repo}", "name": repo, "public": True},
            thread_key=f"github:issue:{repo}#{n}", author=self.rng.choice(self.people), title=text[:80],
            text=text, tags=tags, url=f"https://github.example/{repo}/issues/{n}",
        )  # fmt: skip
        self.issues.append(event)
        return event

    def meeting(self, kind: str) -> dict:
        text, tags = self.text()
        n = self.next_id()
        people = self.rng.sample(self.people, 4)
        prefix = "calendar:event" if kind == "calendar_event" else "notes:meeting"
        return self.item(
            source="calendar" if kind == "calendar_event" else "notes", external_id=f"m{n}", kind=kind,
            container={"key": f"{prefix}:{n}", "name": text[:60], "members": [self.email_of(p) for p in people]},
            thread_key=f"{prefix}:{n}", author=self.email_of(people[0]), title=text[:60], text=text,
            tags=tags, url="",
        )  # fmt: skip

    def item(self, **fields) -> dict:
        event = {"version": 1, "occurred_at": self.when(), **fields}
        self.items.append(event)
        self.by_source.setdefault(event["source"], []).append(event)
        self.by_container.setdefault(event["container"]["key"], []).append(event)
        return event

    def later_version(self, kind: str, pool: list[dict]) -> dict | None:
        if not pool:
            return None
        original = self.rng.choice(pool[-200:])
        version = original.setdefault("_versions", 1) + 1
        original["_versions"] = version
        event = {k: v for k, v in original.items() if not k.startswith("_")}
        event.update(version=version, kind=kind, occurred_at=self.when())
        if kind == "message_changed":
            event["text"] = original["text"] + " (edited: " + self.text()[0] + ")"
        if kind in {"message_deleted"}:
            event["text"] = ""
        return event

    def one(self) -> dict:
        r = self.rng.random()
        slack_items = self.by_source.get("slack", [])
        mails = self.by_source.get("email", [])
        choice = None
        if r < 0.08:
            choice = self.later_version("message_changed", slack_items)
        elif r < 0.11:
            choice = self.later_version("message_deleted", slack_items)
        elif r < 0.12:
            choice = self.later_version("email_recalled", mails)
        elif r < 0.15:
            choice = self.later_version("issue_closed", self.issues)
        elif r < 0.27:
            choice = self.email()
        elif r < 0.33:
            choice = self.issue()
        elif r < 0.36:
            choice = self.issue("pull_request")
        elif r < 0.39:
            choice = self.meeting("calendar_event")
        elif r < 0.42:
            choice = self.meeting("meeting_note")
        return choice or self.slack_message()


def generate(tenant, n_events: int, seed: int = 0) -> list[dict]:
    """`n_events` synthetic normalized events for `tenant` (deterministic for a seed)."""
    gen = _Generator(tenant, seed)
    events = []
    for _ in range(n_events):
        event = gen.one()
        events.append({k: v for k, v in event.items() if not k.startswith("_")})
    return events


def ingest(tenant, payloads: list[dict], batch: int = 500, fast: bool = False) -> None:
    """Store the events in the inbox without enqueueing compile tasks (the caller compiles).

    `fast`: the first event of each container goes through `event_ingest` (source, group
    and memberships), the rest are validated the same way and bulk-inserted — the inbox
    rows are identical, only quicker to make for large benchmarks.
    """
    from connectors.services.ingest import event_ingest_batch

    with no_compile_enqueue():
        if fast:
            _ingest_fast(tenant, payloads, batch)
            return
        for i in range(0, len(payloads), batch):
            event_ingest_batch(tenant=tenant, payloads=payloads[i : i + batch])


@contextmanager
def no_compile_enqueue():
    """Ingest's commit enqueues no drain of the inbox (the wiki's receiver): the caller compiles."""
    from wiki import receivers

    original = receivers.inbox_drain_enqueue
    receivers.inbox_drain_enqueue = lambda tenant_id: None
    try:
        yield
    finally:
        receivers.inbox_drain_enqueue = original


def _ingest_fast(tenant, payloads: list[dict], batch: int) -> None:
    from connectors.models import Event, Source
    from connectors.services.ingest import event_ingest, event_validate

    seen: set[str] = set()
    rows = []
    for payload in payloads:
        if payload["container"]["key"] not in seen:
            seen.add(payload["container"]["key"])
            event_ingest(tenant=tenant, payload=payload)
            continue
        data = event_validate(payload)
        rows.append((data, payload))
    sources = {s.name: s for s in Source.objects.filter(tenant=tenant)}
    events = [
        Event(
            tenant=tenant,
            source=sources[d.source],
            external_id=d.external_id,
            version=d.version,
            kind=d.kind,
            occurred_at=d.occurred_at,
            container_key=d.container.key,
            container_name=d.container.name,
            container_members=d.container.members,
            container_public=d.container.public,
            thread_key=d.thread_key,
            author=d.author,
            title=d.title,
            text=d.text,
            tags={k: v for k, v in d.tags.model_dump().items() if v not in (None, "", [])},
            url=d.url,
            raw={},
        )  # fmt: skip
        for d, _ in rows
    ]
    Event.objects.bulk_create(events, batch_size=batch, ignore_conflicts=True)


def load(tenant, n_events: int, seed: int = 0) -> int:
    """Users + events + compile: a filled wiki for other benchmarks. Returns events compiled."""
    from wiki.services.backlog import compile_pending

    ensure_users(tenant)
    ingest(tenant, generate(tenant, n_events, seed=seed), fast=True)
    return compile_pending(tenant=tenant)
