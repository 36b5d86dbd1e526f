"""Summaries: only when pages exceed their share, reported, cached per visible page version."""

from __future__ import annotations

import re

from tests.context.conftest import FINANCE, SALES, push
from tests.context.test_api import context, everything
from wiki.services.backlog import compile_pending

FACTS = [
    "Vercel signed the order form ORD-2026-118 on 2026-10-02 for ¥480,000 with Lee Robinson.",
    "Kickoff with Guillermo Rauch happened on 2026-10-09; the SLA is 99.95%.",
    "Renewal notice period is 60 days; the auto-renew date is 2027-01-15.",
]


CHATTER = [
    "sounds good, I will check with the team and get back to you on this one",
    "can we move the call to the afternoon? the morning is packed for me this week",
    "thanks, will follow up later today once I have looked at the whole thread",
    "lunch at noon? the usual place downstairs, we can talk about the plan there",
]


def big_vercel_page(tenant, n=20):
    """A long Vercel page: chatter threads, and every fifth thread carries a fact."""
    for i in range(n):
        text = FACTS[(i // 5) % len(FACTS)] if i % 5 == 0 else CHATTER[i % len(CHATTER)]
        day = f"2026-11-{(i % 28) + 1:02d}T10:00:00Z"
        push(
            tenant,
            container=SALES,
            tags={"customer": "Vercel"},
            thread_key=f"vt-{i}",
            occurred_at=day,
            text=text,
            compile=False,
        )
    compile_pending(tenant=tenant)


def wiki_block(data):
    return next((b for b in data["blocks"] if b["kind"] == "wiki"), None)


def test_no_summary_when_the_pages_fit(api, company, monkeypatch):
    from context import services

    made = []
    monkeypatch.setattr(services, "page_summary_text", lambda **kw: made.append(kw) or "")
    data = context(api, task="Vercel renewal", max_tokens=3000)
    assert not any(item["summarized"] for item in wiki_block(data)["items"])
    assert not [w for w in data["warnings"] if w["code"] == "summarized"]
    assert made == []


def test_big_page_is_summarized_reported_and_keeps_the_facts(api, company):
    big_vercel_page(company)
    data = context(api, task="Vercel renewal", max_tokens=600)
    assert data["budget"]["used"] <= 600
    (vercel,) = [i for i in wiki_block(data)["items"] if i["title"] == "Vercel"]
    assert vercel["summarized"] is True
    (warning,) = [w for w in data["warnings"] if w["code"] == "summarized"]
    assert "Vercel" in warning["detail"]
    # The extractive fallback (no LLM configured) keeps dates, amounts, ids and names.
    for needle in ["ORD-2026-118", "¥480,000", "2026-10-02", "Lee Robinson", "2027-01-15"]:
        assert needle in vercel["text"], needle


def test_summary_is_cached_for_the_same_page_version(api, company, monkeypatch):
    from context import services

    made = []
    summarize = services.page_summary_text
    monkeypatch.setattr(
        services, "page_summary_text", lambda **kw: made.append(kw["title"]) or summarize(**kw)
    )
    big_vercel_page(company, n=15)
    first = context(api, task="Vercel renewal", max_tokens=500)
    assert "Vercel" in made
    summaries = len(made)
    second = context(api, task="Vercel renewal", max_tokens=500)
    assert len(made) == summaries  # the same page version: served from the cache
    assert second["prompt"] == first["prompt"]


def test_an_unreachable_cache_costs_a_recompute_not_an_error(api, company, monkeypatch):
    from django.core.cache import cache

    big_vercel_page(company, n=15)
    expected = context(api, task="Vercel renewal", max_tokens=500)

    def down(*args, **kwargs):
        raise ConnectionError("cache server gone")

    monkeypatch.setattr(cache, "get", down)
    monkeypatch.setattr(cache, "set", down)
    again = context(api, task="Vercel renewal", max_tokens=500)
    assert again["prompt"] == expected["prompt"] and again["warnings"] == expected["warnings"]


def test_a_cached_summary_never_leaks_to_a_reader_with_other_sections(api, company):
    big_vercel_page(company, n=15)
    for i in range(3):
        push(
            company,
            container=FINANCE,
            author="bob@acme.com",
            tags={"customer": "Vercel"},
            thread_key=f"fin-{i}",
            text=f"FINANCE-ONLY-MARKER {i}: Vercel margin is 2{i}% on 2026-11-0{i + 1}, ¥{i}90,000 booked.",
        )
    bob = context(api, user="bob", task="Vercel renewal margin", max_tokens=500)
    assert "FINANCE-ONLY-MARKER" in everything(bob)
    alice = context(api, user="alice", task="Vercel renewal margin", max_tokens=500)
    assert "FINANCE-ONLY-MARKER" not in everything(alice)
    assert any(i["summarized"] for i in wiki_block(alice)["items"])


def test_too_small_budget_leaves_pages_out_and_says_so(api, company):
    big_vercel_page(company, n=10)
    data = context(api, task="Vercel renewal", max_tokens=50)
    assert data["budget"]["used"] <= 50
    (warning,) = [w for w in data["warnings"] if w["code"] == "budget_exceeded"]
    assert "Vercel" in warning["detail"]
    assert re.search(r"wiki:vercel", " ".join(warning["items"]))


def test_older_sections_of_a_long_page_are_left_out_and_reported(api, company, settings):
    settings.CONTEXT_PAGE_MAX_SECTIONS = 5
    big_vercel_page(company, n=10)
    data = context(api, task="Vercel renewal", max_tokens=8000)
    (vercel,) = [i for i in wiki_block(data)["items"] if i["title"] == "Vercel"]
    assert len(vercel["text"].splitlines()) >= 5
    (warning,) = [w for w in data["warnings"] if w["code"] == "budget_exceeded"]
    assert "older sections of Vercel" in warning["detail"] and "wiki:vercel" in warning["items"]


def test_an_older_section_that_matches_the_task_is_kept_with_the_newest(api, company, settings):
    settings.CONTEXT_PAGE_MAX_SECTIONS = 3
    big_vercel_page(company, n=10)  # the facts are in threads 0 and 5, the oldest ones
    data = context(api, task="Vercel order form ORD-2026-118", max_tokens=8000)
    (vercel,) = [i for i in wiki_block(data)["items"] if i["title"] == "Vercel"]
    assert "ORD-2026-118" in vercel["text"]  # matched, though older than the 3 newest
    assert sum(chat in vercel["text"] for chat in CHATTER) >= 1  # the newest are there too


def test_a_summarized_page_keeps_the_newest_value_marked_current(api, company):
    big_vercel_page(company, n=15)
    push(
        company,
        container=SALES,
        tags={"customer": "Vercel"},
        thread_key="price-old",
        occurred_at="2026-10-01T10:00:00Z",
        text="Vercel renewal price is $195k/yr.",
    )
    push(
        company,
        container=SALES,
        tags={"customer": "Vercel"},
        thread_key="price-new",
        occurred_at="2026-11-03T10:00:00Z",
        text="Vercel agreed to renew at $172,000 per year for 3 years.",
    )
    data = context(api, task="Vercel renewal price", max_tokens=500)
    (vercel,) = [i for i in wiki_block(data)["items"] if i["title"] == "Vercel"]
    assert vercel["summarized"] is True
    line = next(line for line in vercel["text"].splitlines() if "$172,000" in line)
    assert "current" in line and "2026-11-03" in line and "3 years" in line
    # The older price is only ever said as what the newest replaced.
    assert all("was $195k/yr" in line for line in vercel["text"].splitlines() if "$195k" in line)
