"""Compiler safety: idempotent replays, crash recovery, entity resolution, failures."""

from datetime import timedelta

import pytest
from django.utils import timezone

from connectors.models import Event
from tests.wiki.conftest import slack
from wiki import selectors, services
from wiki.models import Entity, Page, PageSection
from wiki.services import compiler


def _snapshot():
    """The wiki as data, for comparing two runs (ids of events differ between runs)."""
    pages = sorted(Page.objects.values_list("slug", "kind", "status"))
    sections = sorted(
        PageSection.objects.values_list(
            "page__slug", "thread_key", "container_key", "content", "acl", "stale"
        )
    )
    return pages, [tuple(map(str, s)) for s in sections]


def _events():
    return [
        slack("Vercel Inc. wants SSO", ts="1700000000.000100"),
        slack("Apollo launch slips a week", ts="1700000001.000100", tags={"project": "Apollo"}),
        slack("华为技术有限公司 想要试用", ts="1700000002.000100", tags={"customer": "华为"}),
        slack("Pricing for ＶＥＲＣＥＬ approved", ts="1700000003.000100", thread="1700000000.000100"),
    ]


@pytest.fixture
def known_entities(tenant):
    services.entity_ensure(tenant=tenant, kind="customer", name="Vercel")
    services.entity_ensure(tenant=tenant, kind="customer", name="华为")


def test_compiling_the_same_event_twice_changes_nothing(push, known_entities):
    events = push(*_events())
    before = _snapshot()
    history = PageSection.history.count()
    for event in events:
        Event.objects.filter(pk=event.pk).update(state="pending")
        assert services.compile_event(event.pk) == "compiled"
        assert services.compile_event(event.pk) == "compiled"
    assert _snapshot() == before
    assert PageSection.history.count() == history


def test_a_crash_between_steps_leaves_nothing_partial_and_the_rerun_converges(
    push, known_entities, monkeypatch, tenant
):
    events = push(*_events())
    clean = _snapshot()
    PageSection.objects.all().delete()
    Event.objects.update(state="pending")

    def crash(**kwargs):
        raise RuntimeError("worker killed")

    monkeypatch.setattr(compiler, "page_status_apply", crash)  # after the sections were written
    assert services.compile_event(events[1].pk) == "failed"
    assert not PageSection.objects.exists()
    failed = Event.objects.get(pk=events[1].pk)
    assert failed.state == "failed" and "worker killed" in failed.error
    monkeypatch.undo()
    assert services.compile_pending(tenant=tenant) == len(events)
    assert _snapshot() == clean
    assert not Event.objects.exclude(state="compiled").exists()


def test_entity_resolution_folds_case_width_and_legal_suffixes(push, known_entities, tenant):
    push(*_events())
    vercel = Page.objects.get(slug="vercel")
    assert vercel.sections.count() == 1  # the thread: root 'Vercel Inc.' + reply 'ＶＥＲＣＥＬ'
    assert "ＶＥＲＣＥＬ" in vercel.sections.get().content
    assert Page.objects.get(entity__key="华为").sections.count() == 1
    assert Entity.objects.filter(tenant=tenant, kind="customer").count() == 2


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
    assert [e.name for e in selectors.entities_in_text(tenant=tenant, text=text)] == ["Vercel"]


@pytest.mark.parametrize(
    "text",
    ["华为技术有限公司的续约", "和华为集团开会", "华为股份有限公司", "華為的報價", "和華為技術有限公司開會"],
)
def test_entities_in_text_matches_chinese_names(known_entities, tenant, text):
    assert [e.name for e in selectors.entities_in_text(tenant=tenant, text=text)] == ["华为"]


@pytest.mark.parametrize("text", ["新华为人民服务", "新华为人民服务的精神"])
def test_a_chinese_name_inside_a_longer_word_is_not_matched(known_entities, tenant, text):
    assert selectors.entities_in_text(tenant=tenant, text=text) == []


def test_entities_in_text_needs_word_boundaries_for_latin_names(known_entities, tenant):
    assert selectors.entities_in_text(tenant=tenant, text="Vercelization of everything") == []


def test_mixed_chinese_text_lands_on_the_latin_named_page(push, known_entities):
    push(slack("明天和Vercel开会讨论续约"))
    assert "明天和Vercel开会" in Page.objects.get(slug="vercel").sections.get().content


def test_a_tag_naming_an_alias_resolves_to_its_entity(push, tenant):
    alibaba = services.entity_ensure(tenant=tenant, kind="customer", name="阿里巴巴集团", aliases=["Alibaba"])
    push(slack("Discount request", tags={"customer": "Alibaba"}))
    assert list(Entity.objects.filter(kind="customer")) == [alibaba]
    assert "Discount request" in alibaba.page.sections.get().content
    assert services.entity_ensure(tenant=tenant, kind="customer", name="ALIBABA") == alibaba


def test_tag_with_a_legal_suffix_resolves_to_the_existing_entity(push, known_entities):
    push(slack("renewal", tags={"customer": "Vercel Inc."}))
    assert Entity.objects.filter(kind="customer", key="vercel").count() == 1
    assert Page.objects.get(slug="vercel").sections.count() == 1


def test_entity_names_reach_the_segmenter(tenant):
    from almanac.search import segment

    services.entity_ensure(tenant=tenant, kind="customer", name="字节跳动")
    assert "字节跳动" in segment("字节跳动续约")


def test_membership_events_compile_to_nothing(push, tenant, bob):
    event = push(
        slack("", channel="C9", name="#x", public=False, members=["bob@acme.com"], kind="membership_added")
    )
    assert event.state == "compiled"
    assert not PageSection.objects.exists()


def test_message_without_entity_goes_to_its_channel_topic_page(push):
    push(slack("Lunch is at noon", name="#general"))
    page = Page.objects.get(slug="general")
    assert page.kind == "topic" and page.sections.count() == 1


def test_compile_event_task_ignores_missing_and_compiled_events(push):
    from wiki.tasks import compile_event_task

    event = push(slack("Vercel renewal", tags={"customer": "Vercel"}))
    compile_event_task(event.pk)
    compile_event_task(10**9)
    assert PageSection.objects.count() == 1


def test_sweep_compiles_events_whose_task_was_lost(tenant, alice, monkeypatch):
    import connectors.services as connector_services
    from wiki.tasks import SCHEDULES, compile_sweep_task

    monkeypatch.setattr(connector_services, "async_task", lambda *a, **k: None)  # the task is lost
    event = connector_services.event_ingest(
        tenant=tenant, payload=slack("Vercel renewal", tags={"customer": "Vercel"})
    )[0]
    assert compile_sweep_task() == 0  # too young: its own task may still come
    Event.objects.filter(pk=event.pk).update(received_at=event.received_at - timedelta(minutes=5))
    assert compile_sweep_task() == 1
    assert PageSection.objects.filter(page__slug="vercel").exists()
    assert SCHEDULES[0]["func"] == "wiki.tasks.compile_sweep_task"


def test_entity_names_are_rechecked_after_a_change_here_or_after_the_check_interval(tenant, monkeypatch):
    """Requests look at the entity table at most every WIKI_ENTITY_CHECK_SECONDS; a save in
    this process is seen at once, and the compiler (max_age=0) always looks."""
    from wiki import conf

    monkeypatch.setattr(conf, "WIKI_ENTITY_CHECK_SECONDS", 3600)
    services.entity_ensure(tenant=tenant, kind="customer", name="Vercel")
    assert [e.name for e in selectors.entities_in_text(tenant=tenant, text="Vercel and Stripe")] == ["Vercel"]
    services.entity_ensure(tenant=tenant, kind="customer", name="Stripe")  # saved here: seen now
    found = selectors.entities_in_text(tenant=tenant, text="Vercel and Stripe")
    assert [e.name for e in found] == ["Vercel", "Stripe"]
    # Another process renames it (no signal here): requests see it only after the interval.
    Entity.objects.filter(tenant=tenant, name="Stripe").update(
        name="Linear", key="linear", alias_keys=["linear"], updated_at=timezone.now()
    )
    assert [e.name for e in selectors.entities_in_text(tenant=tenant, text="Linear")] == []
    assert [e.name for e in selectors.entity_matcher(tenant.pk, max_age=0).find("Linear")] == ["Linear"]


@pytest.mark.parametrize("text", ["早餐吃了小米粥", "小米粥很好喝"])
def test_a_chinese_name_at_the_start_of_a_longer_word_is_not_matched(tenant, text):
    services.entity_ensure(tenant=tenant, kind="customer", name="小米")  # the segmenter's 小米粥 is one word
    assert selectors.entities_in_text(tenant=tenant, text=text) == []


@pytest.mark.parametrize("text", ["联想集团续约", "和联想开会", "联想的报价"])
def test_a_chinese_name_before_a_legal_form_word_is_matched(tenant, text):
    services.entity_ensure(tenant=tenant, kind="customer", name="联想")  # 联想集团 is one word too
    assert [e.name for e in selectors.entities_in_text(tenant=tenant, text=text)] == ["联想"]


def test_the_upgrade_folds_and_indexes_traditional_chinese_written_before_it(tenant, push):
    from almanac.migration_helpers import refold_entity_keys, reindex_changed_text

    push(slack("華為 asked for the installer", tags={"customer": "華為"}))
    entity = Entity.objects.get(kind="customer")
    services.entity_update(entity=entity, aliases=["華為技術", "Huawei"])
    section = PageSection.objects.get(page__entity=entity)
    assert entity.key == "华为" and "华为" in section.tokens.split()
    # As the release before folded and indexed them: traditional characters kept.
    Entity.objects.filter(pk=entity.pk).update(key="華為", alias_keys=["huawei", "華為", "華為技術"])
    PageSection.objects.filter(pk=section.pk).update(tokens=section.tokens.replace("华为", "華為"))
    assert refold_entity_keys(Entity) == 1
    changed = reindex_changed_text(
        PageSection,
        corpus="wiki",
        text=lambda s: f"{s.page.title}\n{s.title}\n{s.content}",
        related=("page",),
    )
    assert changed == 1
    entity.refresh_from_db()
    section.refresh_from_db()
    assert entity.key == "华为" and {"華為", "华为", "huawei"} <= set(entity.alias_keys)
    assert "华为" in section.tokens.split() and "華為" not in section.tokens
    # Text in either script finds it again, and a tag in either spelling is the same entity.
    selectors.entities_changed(tenant.pk)
    for text in ("華為的合同", "华为的合同"):
        assert [e.pk for e in selectors.entities_in_text(tenant=tenant, text=text)] == [entity.pk], text
    assert services.entity_ensure(tenant=tenant, kind="customer", name="華為") == entity


def test_the_upgrade_reads_the_whole_keyword_text_as_the_segmenter_now_does(tenant, push):
    """A page title in traditional characters, a full-width thousands separator."""
    from almanac.migration_helpers import reindex_changed_text

    push(slack("MediaTek quoted 1，200 units", tags={"customer": "聯發科"}))
    section = PageSection.objects.get()
    assert {"联发科", "1200"} <= set(section.tokens.split())
    PageSection.objects.filter(pk=section.pk).update(tokens="聯發科 mediatek quot 1 200 unit")  # as before
    changed = reindex_changed_text(
        PageSection,
        corpus="wiki",
        text=lambda s: f"{s.page.title}\n{s.title}\n{s.content}",
        related=("page",),
    )
    section.refresh_from_db()
    assert changed == 1 and {"联发科", "1200"} <= set(section.tokens.split())
