"""Aggregation: a task asking for all open items of a customer gets the open items from
every source (Slack, e-mail, GitHub) within a small budget, each with its source."""

from __future__ import annotations

from tests.context.conftest import SALES, push
from tests.context.test_api import context
from wiki.services.backlog import compile_pending

# (source, kind, container) of each item
SUPPORT = ("slack", "message", {"key": "slack:channel:CSUPPORT", "name": "#support", "public": True})
MAIL = ("email", "email", {"key": "email:thread:open-point", "name": "Open point", "public": True})
REPO = ("github", "issue", {"key": "github:repo:acme/vega", "name": "acme/vega", "public": True})
ITEMS = {
    "en": [
        (SUPPORT, "Open risk for Globex: SAML certificate expires on December 3."),
        (MAIL, "One open point on our side: audit export misses 14 fields. Can you look into it?"),
        (REPO, "Globex: VPN tunnel drops every 18 minutes. Still open."),
    ],
    "zh": [
        (SUPPORT, "华源物流 的未决风险：SAML证书将于12月3日到期。"),
        (MAIL, "我们这边还有一个未解决的问题：审计导出缺少14个字段。请帮忙跟进。"),
        (REPO, "华源物流：VPN隧道每18分钟断开一次。仍未解决。"),
    ],
}


def open_items(tenant, customer: str, lang: str) -> list[str]:
    for n, ((source, kind, container), text) in enumerate(ITEMS[lang]):
        push(tenant, source=source, kind=kind, container=container, tags={"customer": customer},
             thread_key=f"{container['key']}:{n}", occurred_at=f"2026-11-0{n + 1}T10:00:00Z", text=text,
             compile=False)  # fmt: skip
    for i in range(30):  # a busy page: the open items must be chosen, not just fit
        push(tenant, container=SALES, tags={"customer": customer}, thread_key=f"batch-{i}",
             occurred_at=f"2026-10-{i % 28 + 1:02d}T10:00:00Z",
             text=f"{customer} invoice batch {i} of ${1000 + 37 * i:,} was sent.", compile=False)  # fmt: skip
    compile_pending(tenant=tenant)
    return [text for _, text in ITEMS[lang]]


def answers(prompt: str, texts: list[str]) -> list[bool]:
    # the value each item names: its date, its count, its interval
    marks = {0: ("December 3", "12月3日"), 1: ("14 fields", "14个字段"), 2: ("18 minutes", "18分钟")}
    return [any(mark in prompt for mark in marks[n]) for n in range(len(texts))]


def test_all_open_items_of_a_customer_from_every_source(api, tenant, alice):
    texts = open_items(tenant, "Globex", "en")
    data = context(
        api, task="List all open risks and issues for Globex, with where each came from.", max_tokens=800
    )
    assert all(answers(data["prompt"], texts)), data["prompt"]
    (page,) = [i for i in data["blocks"][0]["items"] if i["title"] == "Globex"]
    sources = {s["source"] for s in page["sources"]}
    assert {"slack", "email", "github"} <= sources
    assert data["budget"]["used"] <= 800


def test_in_chinese_too(api, tenant, alice):
    texts = open_items(tenant, "华源物流", "zh")
    data = context(api, task="列出华源物流所有未解决的风险和问题，并注明来源。", max_tokens=800)
    assert all(answers(data["prompt"], texts)), data["prompt"]
