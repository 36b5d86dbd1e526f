"""A small company for the context tests, built through the real services.

Events go through `connectors.services.ingest.event_ingest` and are compiled into the wiki by
`wiki.services.compile_pending`; memories through `memories.services.memory_create`.
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta

import pytest

from connectors.services.ingest import event_ingest
from memories.services.memories import memory_create
from wiki.services.backlog import compile_pending

_ids = itertools.count(1)


def push(tenant, *, compile=True, **fields):
    """Ingest one event and compile the inbox (what the compile task does in production)."""
    event, _ = event_ingest(tenant=tenant, payload=payload_of(**fields))
    if compile:
        compile_pending(tenant=tenant)
    return event


def payload_of(
    *, text, container, source="slack", kind="message", occurred_at="2026-11-30T10:00:00Z", **extra
):
    return {
        "source": source,
        "external_id": extra.pop("external_id", f"ext-{next(_ids)}"),
        "version": extra.pop("version", 1),
        "kind": kind,
        "occurred_at": occurred_at,
        "container": container,
        "thread_key": extra.pop("thread_key", f"thread-{next(_ids)}"),
        "author": extra.pop("author", "alice@acme.com"),
        "title": extra.pop("title", ""),
        "text": text,
        "tags": extra.pop("tags", {}),
        "url": extra.pop("url", ""),
    }


SALES = {"key": "slack:channel:CSALES", "name": "#sales", "public": True}
FINANCE = {
    "key": "slack:channel:CFIN",
    "name": "#finance-internal",
    "members": ["bob@acme.com"],
    "public": False,
}


RENEWAL_DUE = (datetime.now(UTC).date() + timedelta(days=30)).isoformat()


@pytest.fixture
def company(tenant, alice, bob, charlie):
    """Vercel (customer, public and private sections), Zephyr (project, Chinese), memories."""
    push(
        tenant,
        container=SALES,
        tags={"customer": "Vercel"},
        # Always ahead: the page's status lists it as an open item (docs/wiki.md, Status).
        text=f"Vercel renewal: contract value ¥120,000, renewal due {RENEWAL_DUE}, champion is Lee Robinson.",
        url="https://acme.slack.com/archives/CSALES/p1",
    )
    push(
        tenant,
        container=FINANCE,
        tags={"customer": "Vercel"},
        author="bob@acme.com",
        occurred_at="2026-11-29T09:00:00Z",
        text="Vercel discount ceiling is 15% — FINANCE-ONLY-MARKER, do not share outside finance.",
    )
    push(
        tenant,
        container={"key": "slack:channel:CENG", "name": "#zephyr", "public": True},
        tags={"project": "Zephyr"},
        occurred_at="2026-11-20T08:00:00Z",
        text="Zephyr 项目 在 2026-11-20 完成了 PRD-2024-013 评审，王伟 负责上线计划。",
    )
    memory_create(
        owner=alice, content="Alice prefers renewal proposals as one-page summaries with pricing first."
    )
    memory_create(
        owner=alice,
        content="Met the Vercel CTO to discuss the renewal and a 3-year term.",
        memory_type="episodic",
        occurred_at=date(2025, 3, 12),
    )
    memory_create(owner=bob, content="BOB-PRIVATE-MEMORY: Vercel owes an unpaid invoice INV-2026-77.")
    return tenant


@pytest.fixture
def no_freshness_cache(settings):
    """Read source freshness on every call (production caches it for a few seconds)."""
    settings.CONTEXT_FRESHNESS_CACHE_SECONDS = 0
