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
    """The described customer's page comes first, with its answer (its look-alike may
    follow: a description is no name, so nothing is left out for it)."""
    prompt = _prompt(alice, twins, task, 800)
    assert answer in prompt
    headers = [line for line in prompt.splitlines() if line.startswith("## ")]
    assert headers and headers[0].startswith(f"## {name}")
