"""Entities found by description: a task that names no customer but gives its industry and
city ranks that customer's page first (`wiki.search.described_pages`), in English and
Chinese; a description two customers fit names both as candidates."""

from __future__ import annotations

from tests.context.conftest import SALES, push
from tests.context.test_api import context


def profiles(tenant):
    for name, text in [
        ("Harbor Freight Lines", "Harbor Freight Lines is a logistics company headquartered in Rotterdam."),
        ("Pinecrest Logistics", "Pinecrest Logistics is a logistics company headquartered in Denver."),
        ("华源物流", "华源物流是一家物流企业，总部在青岛。"),
        ("金泰物流", "金泰物流是一家物流企业，总部在昆明。"),
    ]:
        push(tenant, container=SALES, tags={"customer": name}, text=text)
        push(
            tenant, container=SALES, tags={"customer": name}, text=f"{name} pilot integrates with Snowflake."
        )


def first_page(data) -> str:
    return next(b for b in data["blocks"] if b["kind"] == "wiki")["items"][0]["title"]


def test_an_english_description_finds_its_customer(api, tenant, alice):
    profiles(tenant)
    data = context(api, task="For our logistics customer headquartered in Denver: which system do we integrate with, and how long is their trial expected to last?",
                   max_tokens=1500)  # fmt: skip
    assert first_page(data) == "Pinecrest Logistics"


def test_a_chinese_description_finds_its_customer(api, tenant, alice):
    profiles(tenant)
    data = context(
        api, task="总部在昆明的那家物流客户：我们要对接哪个系统，试用期预计多长？", max_tokens=1500
    )
    assert first_page(data) == "金泰物流"


def test_a_description_two_customers_fit_names_both(api, tenant, alice):
    profiles(tenant)
    data = context(
        api, task="Our logistics customer headquartered somewhere in Europe or the US", max_tokens=3000
    )
    titles = [i["title"] for i in next(b for b in data["blocks"] if b["kind"] == "wiki")["items"]]
    assert {"Harbor Freight Lines", "Pinecrest Logistics"} <= set(titles)
