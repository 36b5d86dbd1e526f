"""Budget by fact: at a small budget a summarized page keeps the fact lines that answer the
task (ranked by its words), not just the newest ones, each with its date and author."""

from __future__ import annotations

from tests.context.conftest import SALES, push
from tests.context.test_api import context
from wiki.services.backlog import compile_pending


def busy_page(tenant, n=30):
    """A Vercel page of many dated facts, newest last; the one about seats is the oldest."""
    push(
        tenant,
        container=SALES,
        tags={"customer": "Vercel"},
        thread_key="seats",
        occurred_at="2026-09-01T10:00:00Z",
        text="Vercel wants 750 seats on the Okta tenant for the first year.",
        compile=False,
    )
    for i in range(n):
        push(
            tenant,
            container=SALES,
            tags={"customer": "Vercel"},
            thread_key=f"shipment-{i}",
            occurred_at=f"2026-10-{i % 28 + 1:02d}T10:00:00Z",
            text=f"Vercel invoice batch {i} of ${1000 + 37 * i:,} was sent on 2026-10-{i % 28 + 1:02d}.",
            compile=False,
        )
    compile_pending(tenant=tenant)


def test_the_fact_that_answers_the_task_survives_800_tokens(api, tenant, alice):
    busy_page(tenant)
    data = context(api, task="How many seats does Vercel want on the Okta tenant?", max_tokens=800)
    (vercel,) = [b for b in data["blocks"] if b["kind"] == "wiki"][0]["items"][:1]
    assert vercel["title"] == "Vercel" and vercel["summarized"] is True
    line = next(line for line in vercel["text"].splitlines() if "750 seats" in line)
    assert "2026-09-01" in line and "alice" in line  # with its source's date and author
    assert data["prompt"].index("750 seats") < data["prompt"].index("invoice batch")


def test_in_chinese_too(api, tenant, alice):
    push(
        tenant,
        container=SALES,
        tags={"customer": "鼎川制造"},
        thread_key="seats",
        occurred_at="2026-09-01T10:00:00Z",
        text="鼎川制造 需要 610个席位，接入 Okta 租户。",
        compile=False,
    )
    for i in range(30):
        push(
            tenant,
            container=SALES,
            tags={"customer": "鼎川制造"},
            thread_key=f"invoice-{i}",
            occurred_at=f"2026-10-{i % 28 + 1:02d}T10:00:00Z",
            text=f"鼎川制造 第{i}批发票 {10000 + 37 * i}元 已于 2026-10-{i % 28 + 1:02d} 寄出。",
            compile=False,
        )
    compile_pending(tenant=tenant)
    data = context(api, task="鼎川制造 的 Okta 租户需要多少个席位？", max_tokens=800)
    assert "610个席位" in data["prompt"]
    assert data["budget"]["used"] <= 800


def kickoff_page(tenant, customer: str, kickoff: str, noise: str):
    """A customer page whose answering sentence ("the Databricks integration") states no
    value, among many dated facts."""
    push(tenant, container=SALES, tags={"customer": customer}, thread_key="kickoff",
         occurred_at="2026-09-01T10:00:00Z", text=kickoff, compile=False)  # fmt: skip
    for i in range(30):
        push(tenant, container=SALES, tags={"customer": customer}, thread_key=f"batch-{i}",
             occurred_at=f"2026-10-{i % 28 + 1:02d}T10:00:00Z", text=noise.format(i=i, n=1000 + 37 * i),
             compile=False)  # fmt: skip
    compile_pending(tenant=tenant)


def test_a_sentence_with_no_value_that_answers_the_task_survives_800_tokens(api, tenant, alice):
    kickoff_page(tenant, "Vercel", "Vercel kickoff: scope, timeline, and the Databricks integration.",
                 "Vercel invoice batch {i} of ${n:,} was sent.")  # fmt: skip
    data = context(api, task="Which system do we integrate with for Vercel?", max_tokens=800)
    assert "Databricks integration" in data["prompt"]
    assert data["budget"]["used"] <= 800


def test_a_chinese_sentence_with_no_value_too(api, tenant, alice):
    kickoff_page(tenant, "鼎川制造", "鼎川制造 启动会：范围、时间表，以及与 Jira 的对接。",
                 "鼎川制造 第{i}批发票 {n}元 已寄出。")  # fmt: skip
    data = context(api, task="鼎川制造 我们要对接哪个系统？", max_tokens=800)
    assert "Jira" in data["prompt"]


def test_the_page_the_task_names_gets_the_larger_share(api, tenant, alice, settings):
    """Pages summarized to share a small budget: the named page's share is
    CONTEXT_ENTITY_PAGE_WEIGHT times another's, so its answer stays."""
    busy_page(tenant)
    for i in range(30):  # another page the task's words hit, as long as Vercel's
        push(tenant, container=SALES, tags={"project": "Okta rollout"}, thread_key=f"rollout-{i}",
             occurred_at=f"2026-10-{i % 28 + 1:02d}T11:00:00Z",
             text=f"Okta rollout seats report {i}: {100 + i} seats active on the Okta tenant on 2026-10-{i % 28 + 1:02d}.",
             compile=False)  # fmt: skip
    compile_pending(tenant=tenant)

    def shares():
        data = context(api, task="How many seats does Vercel want on the Okta tenant?", max_tokens=800)
        items = {i["title"]: i for i in [b for b in data["blocks"] if b["kind"] == "wiki"][0]["items"]}
        return {title: len(item["text"]) for title, item in items.items()}, data["prompt"]

    settings.CONTEXT_ENTITY_PAGE_WEIGHT = 1.0
    even, _ = shares()
    settings.CONTEXT_ENTITY_PAGE_WEIGHT = 4.0
    weighted, prompt = shares()
    assert weighted["Vercel"] > even["Vercel"] and "750 seats" in prompt


def test_a_renewal_price_said_after_a_semicolon_does_not_replace_the_quote():
    """ "pushed back on the renewal; we are now at $131/seat" is read as one sentence: the
    renewal's price, so the per-seat quote stays current and the older renewal price is
    said only as what it was."""
    from wiki.services.summary import facts_summary

    contents = [
        "[2026-10-07] felix: As discussed: 380 seats of Vega at $83/seat per year.\n"
        "[2026-12-01] felix: For the renewal we propose $152/seat.\n"
        "[2026-12-04] felix: Brifield pushed back on the renewal; we are now at $131/seat."
    ]
    text = facts_summary(title="Brifield Health", contents=contents, max_tokens=300)
    quote = next(line for line in text.splitlines() if "$83/seat" in line)
    assert "no longer current" not in quote and "was" not in quote
    renewal = next(line for line in text.splitlines() if "$131/seat" in line)
    assert "pushed back on the renewal; we are now at $131/seat" in renewal and "was $152" in renewal


def test_one_fact_from_two_sources_is_printed_once_with_both(api, tenant, alice):
    push(tenant, container=SALES, tags={"customer": "Vercel"}, thread_key="price",
         occurred_at="2026-09-01T10:00:00Z", text="Vercel agreed to $41 per seat per month.",
         compile=False)  # fmt: skip
    push(tenant, source="email", container={"key": "email:thread:vq", "name": "Vercel quote", "public": True},
         tags={"customer": "Vercel"}, thread_key="vq", occurred_at="2026-09-03T10:00:00Z",
         author="lee@vercel.com", text="Confirming the price of $41 per seat per month.",
         compile=False)  # fmt: skip
    busy_page(tenant)
    data = context(api, task="What price per seat did Vercel agree to?", max_tokens=800)
    lines = [line for line in data["prompt"].splitlines() if "$41 per seat" in line]
    assert len(lines) == 1, lines
    assert "2026-09-03, lee" in lines[0] and "also 2026-09-01, alice" in lines[0]
    assert "#sales" in lines[0] and "Vercel quote" in lines[0]
