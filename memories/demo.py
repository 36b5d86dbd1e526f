"""Demo memories (zh + en, several scopes) and one finished session whose extraction ran."""

from __future__ import annotations

from datetime import date

from memories.models import ConversationSession, Memory
from memories.services.memories import memory_create
from memories.services.sessions import session_create, session_end, turn_add
from memories.tasks import session_extract_task

# username, content, memory_type, scope, scope_key, importance, occurred_at
MEMORIES = [
    (
        "alice",
        "Vercel prefers annual billing and asked for a 10% multi-year discount.",
        "semantic",
        "project",
        "Apollo",
        0.8,
        None,
    ),
    ("alice", "我喜欢简洁的要点式回答，不要长篇大论。", "semantic", "user", None, 0.7, None),
    (
        "alice",
        "Met Vercel's procurement lead on 2026-11-12 to review the renewal draft.",
        "episodic",
        "user",
        None,
        0.6,
        "2026-11-12",
    ),
    (
        "bob",
        "Finance closes the books on the 5th working day of each month.",
        "semantic",
        "dept",
        "Finance",
        0.7,
        None,
    ),
    (
        "bob",
        "PRD-2024-013 的预算上限是 120 万元，超出需要 CFO 审批。",
        "semantic",
        "project",
        "Apollo",
        0.9,
        None,
    ),
    (
        "carol",
        "Zephyr uses PostgreSQL 18 with pgvector; the HNSW index is rebuilt on deploy.",
        "semantic",
        "project",
        "Zephyr",
        0.6,
        None,
    ),
    ("carol", "I prefer code reviews in the morning before standup.", "semantic", "user", None, 0.5, None),
    ("wangwei", "华东区客户更喜欢电话沟通，邮件回复率很低。", "semantic", "dept", "Sales", 0.7, None),
    (
        "wangwei",
        "11 月 20 日和阿里云开了季度复盘会，对方希望提前续约。",
        "episodic",
        "user",
        None,
        0.8,
        "2026-11-20",
    ),
    (
        "dave",
        "The office Wi-Fi password rotates on the first Monday of the month.",
        "semantic",
        "tenant",
        None,
        0.4,
        None,
    ),
]

SESSION_TITLE = "demo: Vercel renewal prep"
SESSION_TURNS = [
    ("user", "你好"),
    ("assistant", "你好！有什么可以帮你？"),
    ("user", "我喜欢用中文写周报。"),
    ("user", "我们项目组上周五和 Vercel 开了续约会议，对方希望年付。"),
    ("assistant", "好的，我记下了。"),
    ("user", "I prefer meeting notes as bullet points."),
    ("user", "谢谢"),
]


def _session(user) -> ConversationSession:
    session = ConversationSession.objects.filter(user=user, title=SESSION_TITLE).first()
    if session is None:
        session = session_create(user=user, title=SESSION_TITLE)
        for role, content in SESSION_TURNS:
            turn_add(session=session, role=role, content=content)
        session_end(session=session)
    session_extract_task(session.pk)  # synchronously: the demo shows its result at once
    return session


def load(company) -> str:
    created = 0
    for username, content, mtype, scope, key, importance, occurred in MEMORIES:
        user = company.users[username]
        if Memory.objects.filter(owner=user, content=content).exists():
            continue
        _, duplicate = memory_create(
            owner=user, content=content, memory_type=mtype, scope=scope, scope_key=key, importance=importance,
            occurred_at=date.fromisoformat(occurred) if occurred else None, meta={"source": "demo"}, reason="demo",
        )  # fmt: skip
        created += duplicate is None
    session = _session(company.users["alice"])
    extracted = Memory.objects.filter(meta__session_id=session.pk).count()
    total = Memory.objects.filter(tenant=company.tenant).count()
    return f"{created} memories added ({total} in all); session {session.pk} ended, {extracted} memories extracted"
