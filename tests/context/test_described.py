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


def test_a_task_that_says_customer_describes_customers_not_a_product_naming_them(tenant, alice):
    from wiki.search import described_pages

    profiles(tenant)
    for name, quote in [("Harbor Freight Lines", "$41"), ("Pinecrest Logistics", "$44")]:
        push(
            tenant, container=SALES, tags={"customer": name}, text=f"{name} quote: {quote} per seat per year."
        )
    for project in ("Lumen", "Vega"):  # a product's page names its customers, the logistics ones too
        push(tenant, container=SALES, tags={"project": project},
             text=f"{project} quotes per seat: Harbor Freight Lines and Pinecrest Logistics.")  # fmt: skip
    entities, _ = described_pages(
        user=alice,
        tenant_id=tenant.pk,
        ranked=[],
        task="What did we last quote our logistics customer per seat?",
    )
    assert {e.name for e in entities} == {"Harbor Freight Lines", "Pinecrest Logistics"}
    for name, quote in [("华源物流", "310元"), ("金泰物流", "290元")]:
        push(tenant, container=SALES, tags={"customer": name}, text=f"{name} 报价：每席位{quote}。")
    push(tenant, container=SALES, tags={"project": "星图"}, text="星图 每席位报价：华源物流、金泰物流。")
    entities, _ = described_pages(
        user=alice, tenant_id=tenant.pk, ranked=[], task="那家物流客户的每席位报价是多少？"
    )
    assert {e.name for e in entities} == {"华源物流", "金泰物流"}
