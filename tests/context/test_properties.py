"""Property-based: over random tasks and budgets on one corpus, the ceiling holds exactly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from almanac.search.tokens import count_tokens
from tests.context.conftest import SALES, push
from tests.context.test_summaries import big_vercel_page

WORDS = [
    "Vercel",
    "renewal",
    "续约",
    "提案",
    "Zephyr",
    "PRD-2024-013",
    "王伟",
    "discount",
    "合同",
    "pricing",
    "the",
    "和",
]
tasks = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join) | st.text(
    min_size=1, max_size=60
).filter(lambda t: t.strip() and "\x00" not in t)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=tasks, max_tokens=st.integers(50, 8000))
def test_used_never_exceeds_max_tokens_and_is_exact(api, company, session_with_turns, task, max_tokens):
    response = api.post(
        "/context",
        {"user": "alice", "task": task, "max_tokens": max_tokens, "session_id": session_with_turns},
    )
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["budget"]["used"] <= max_tokens
    assert count_tokens(data["prompt"]) == data["budget"]["used"]
    summarized = {i["id"] for b in data["blocks"] for i in b["items"] if i["summarized"]}
    reported = {i for w in data["warnings"] if w["code"] == "summarized" for i in w["items"]}
    assert summarized == reported


@pytest.fixture
def session_with_turns(company, alice):
    from memories.services.sessions import session_create, turn_add

    big_vercel_page(company, n=12)
    push(
        company,
        container=SALES,
        tags={"customer": "Zephyr"},
        text="Zephyr 续约 合同 ¥90,000 于 2026-12-01 签署。",
    )
    session = session_create(user=alice)
    for i in range(6):
        turn_add(
            session=session,
            role="user" if i % 2 == 0 else "assistant",
            content=f"turn {i}: let us talk about the Vercel renewal deck, slide {i}",
        )
    return session.pk
