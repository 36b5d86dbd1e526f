"""Entity names in text (`wiki.matching`): folding, word boundaries, the per-process cache."""

import pytest
from django.utils import timezone

from wiki import matching
from wiki.models import Entity
from wiki.services.entities import entity_ensure


@pytest.mark.parametrize(
    "text",
    [
        "Vercel Inc. signed",
        "VERCEL signed",
        "ＶＥＲＣＥＬ signed",
        "vercel, inc. signed",
        "Vercel LLC signed",
        "明天和Vercel开会",  # Chinese right next to it is an edge
        "为Vercel起草续约提案",
    ],
)
def test_entities_in_text_matches_folded_latin_names(known_entities, tenant, text):
    assert [e.name for e in matching.entities_in_text(tenant=tenant, text=text)] == ["Vercel"]


@pytest.mark.parametrize(
    "text",
    ["华为技术有限公司的续约", "和华为集团开会", "华为股份有限公司", "華為的報價", "和華為技術有限公司開會"],
)
def test_entities_in_text_matches_chinese_names(known_entities, tenant, text):
    assert [e.name for e in matching.entities_in_text(tenant=tenant, text=text)] == ["华为"]


@pytest.mark.parametrize("text", ["新华为人民服务", "新华为人民服务的精神"])
def test_a_chinese_name_inside_a_longer_word_is_not_matched(known_entities, tenant, text):
    assert matching.entities_in_text(tenant=tenant, text=text) == []


def test_entities_in_text_needs_word_boundaries_for_latin_names(known_entities, tenant):
    assert matching.entities_in_text(tenant=tenant, text="Vercelization of everything") == []


def test_entity_names_are_rechecked_after_a_change_here_or_after_the_check_interval(tenant, settings):
    """Requests look at the entity table at most every WIKI_ENTITY_CHECK_SECONDS; a save in
    this process is seen at once, and the compiler (max_age=0) always looks."""
    settings.WIKI_ENTITY_CHECK_SECONDS = 3600
    entity_ensure(tenant=tenant, kind="customer", name="Vercel")
    assert [e.name for e in matching.entities_in_text(tenant=tenant, text="Vercel and Stripe")] == ["Vercel"]
    entity_ensure(tenant=tenant, kind="customer", name="Stripe")  # saved here: seen now
    found = matching.entities_in_text(tenant=tenant, text="Vercel and Stripe")
    assert [e.name for e in found] == ["Vercel", "Stripe"]
    # Another process renames it (no signal here): requests see it only after the interval.
    Entity.objects.filter(tenant=tenant, name="Stripe").update(
        name="Linear", key="linear", alias_keys=["linear"], updated_at=timezone.now()
    )
    assert [e.name for e in matching.entities_in_text(tenant=tenant, text="Linear")] == []
    assert [e.name for e in matching.entity_matcher(tenant.pk, max_age=0).find("Linear")] == ["Linear"]


@pytest.mark.parametrize("text", ["早餐吃了小米粥", "小米粥很好喝"])
def test_a_chinese_name_at_the_start_of_a_longer_word_is_not_matched(tenant, text):
    entity_ensure(tenant=tenant, kind="customer", name="小米")  # the segmenter's 小米粥 is one word
    assert matching.entities_in_text(tenant=tenant, text=text) == []


@pytest.mark.parametrize("text", ["联想集团续约", "和联想开会", "联想的报价"])
def test_a_chinese_name_before_a_legal_form_word_is_matched(tenant, text):
    entity_ensure(tenant=tenant, kind="customer", name="联想")  # 联想集团 is one word too
    assert [e.name for e in matching.entities_in_text(tenant=tenant, text=text)] == ["联想"]
