"""Entities in the context call: a task that describes a customer finds it, and customers
whose names look alike are never mixed (English and Chinese)."""

from __future__ import annotations

import pytest

from context.services import context_build
from tests.context.conftest import SALES, push
from wiki.search import lookalike


def _customer(tenant, name: str, text: str, when: str) -> None:
    push(tenant, container=SALES, tags={"customer": name}, text=text, occurred_at=when)


@pytest.fixture
def twins(tenant, alice):
    """Two pairs of look-alike customers, each with its own price and a profile line."""
    _customer(
        tenant, "Norwick Health", "Norwick Health: we quoted $104/seat for 230 seats.", "2026-11-02T10:00:00Z"
    )
    _customer(
        tenant,
        "Norwick Robotics",
        "Norwick Robotics: we quoted $96/seat for 490 seats.",
        "2026-11-03T10:00:00Z",
    )
    _customer(
        tenant,
        "Norwick Robotics",
        "Account profile: Norwick Robotics is a robotics company headquartered in Denver, about 2,400 employees.",
        "2026-11-04T10:00:00Z",
    )
    _customer(tenant, "鼎川制造", "鼎川制造的报价是每席位669元，共610个席位。", "2026-11-05T10:00:00Z")
    _customer(tenant, "鼎川能源", "鼎川能源的报价是每席位746元，共860个席位。", "2026-11-06T10:00:00Z")
    _customer(
        tenant,
        "鼎川能源",
        "客户档案：鼎川能源是一家能源企业，总部在重庆，约1,200名员工。",
        "2026-11-07T10:00:00Z",
    )
    return tenant


def _prompt(user, tenant, task: str, max_tokens: int = 800) -> str:
    return context_build(user=user, tenant=tenant, task=task, max_tokens=max_tokens, touch=False)["prompt"]


def test_names_that_share_their_start_are_look_alikes():
    assert lookalike("Norwick Health", "Norwick Robotics")
    assert lookalike("鼎川制造", "鼎川能源")
    assert not lookalike("Brifield Health", "Talvale Health")  # a shared industry word is no shared name
    assert not lookalike("Norwick", "Northgate")  # nor a few shared letters
    assert not lookalike("华为", "华润")
    assert not lookalike("Norwick Health", "norwick health")  # the same name


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("task", "answer", "other"),
    [
        ("What per-seat price did we quote Norwick Health?", "$104/seat", "$96/seat"),
        ("What per-seat price did we quote Norwick Robotics?", "$96/seat", "$104/seat"),
        ("我们给鼎川制造的单价是多少？", "每席位669元", "每席位746元"),
        ("我们给鼎川能源的单价是多少？", "每席位746元", "每席位669元"),
    ],
)
def test_a_look_alike_is_left_out(twins, alice, task, answer, other):
    for budget in (3000, 800):
        prompt = _prompt(alice, twins, task, budget)
        assert answer in prompt
        assert other not in prompt


@pytest.mark.django_db
def test_a_task_about_both_gets_both(twins, alice):
    prompt = _prompt(
        alice, twins, "Compare what we quoted Norwick Health and Norwick Robotics per seat.", 1500
    )
    assert "$104/seat" in prompt and "$96/seat" in prompt


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("task", "name", "answer", "other"),
    [
        (
            "What did we quote the robotics company headquartered in Denver?",
            "Norwick Robotics",
            "$96/seat",
            "$104/seat",
        ),
        ("总部在重庆的那家能源企业，我们的报价是多少？", "鼎川能源", "每席位746元", "每席位669元"),
    ],
)
def test_a_described_customer_is_found(twins, alice, task, name, answer, other):
    """The described customer's page comes first, with its answer, and its look-alike's
    figures stay out, also where a product's page names the look-alike."""
    lookalike_of = {"Norwick Robotics": "Norwick Health", "鼎川能源": "鼎川制造"}[name]
    push(twins, container=SALES, tags={"project": "Vega"}, occurred_at="2026-11-08T10:00:00Z",
         text=f"Vega rollout: {lookalike_of} signed at {other}.")  # fmt: skip
    for budget in (3000, 800):
        prompt = _prompt(alice, twins, task, budget)
        assert answer in prompt and other not in prompt
        headers = [line for line in prompt.splitlines() if line.startswith("## ")]
        assert headers and headers[0].startswith(f"## {name}")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("task", "answer", "other"),
    [
        ("What per-seat price did we quote Harbor Freight for the Vega rollout?", "$88/seat", "$71/seat"),
        ("Vega 项目里我们给金泰物流的单价是多少？", "每席位512元", "每席位438元"),
    ],
)
def test_a_page_mixing_customers_shows_only_the_named_ones(tenant, alice, task, answer, other):
    """A page that is not a customer's (a project's) holds two customers' quotes: a task that
    names one gets that one's, never the other's, though their names look nothing alike."""
    for day, (customer, text) in enumerate(
        [
            ("Harbor Freight", "Harbor Freight: we quoted $88/seat for the Vega rollout."),
            ("Pinecrest Retail", "Pinecrest Retail: we quoted $71/seat for the Vega rollout."),
            ("金泰物流", "金泰物流：Vega 项目报价每席位512元。"),
            ("远山零售", "远山零售：Vega 项目报价每席位438元。"),
        ],
        start=1,
    ):
        push(tenant, container=SALES, tags={"customer": customer, "project": "Vega rollout"}, text=text,
             thread_key=f"quote-{day}", occurred_at=f"2026-11-0{day}T10:00:00Z")  # fmt: skip
    for budget in (3000, 800):
        prompt = _prompt(alice, tenant, task, budget)
        assert answer in prompt and other not in prompt
    both = _prompt(alice, tenant, "Compare our Vega quotes to Harbor Freight and Pinecrest Retail.", 1500)
    assert "$88/seat" in both and "$71/seat" in both
