"""Compiler safety: idempotent replays, crash recovery, entity resolution, failures."""

from datetime import timedelta

from connectors.models import Event
from tests.wiki.conftest import slack
from wiki.models import Entity, Page, PageSection
from wiki.services import compiler
from wiki.services.backlog import compile_batch, compile_pending
from wiki.services.compiler import compile_event
from wiki.services.entities import entity_ensure


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


def test_compiling_the_same_event_twice_changes_nothing(push, known_entities):
    events = push(*_events())
    before = _snapshot()
    history = PageSection.history.count()
    for event in events:
        Event.objects.filter(pk=event.pk).update(state="pending")
        assert compile_event(event.pk) == "compiled"
        assert compile_event(event.pk) == "compiled"
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
    assert compile_event(events[1].pk) == "failed"
    assert not PageSection.objects.exists()
    failed = Event.objects.get(pk=events[1].pk)
    assert failed.state == "failed" and "worker killed" in failed.error
    monkeypatch.undo()
    assert compile_pending(tenant=tenant) == len(events)
    assert _snapshot() == clean
    assert not Event.objects.exclude(state="compiled").exists()


def test_entity_resolution_folds_case_width_and_legal_suffixes(push, known_entities, tenant):
    push(*_events())
    vercel = Page.objects.get(slug="vercel")
    assert vercel.sections.count() == 1  # the thread: root 'Vercel Inc.' + reply 'ＶＥＲＣＥＬ'
    assert "ＶＥＲＣＥＬ" in vercel.sections.get().content
    assert Page.objects.get(entity__key="华为").sections.count() == 1
    assert Entity.objects.filter(tenant=tenant, kind="customer").count() == 2


def test_mixed_chinese_text_lands_on_the_latin_named_page(push, known_entities):
    push(slack("明天和Vercel开会讨论续约"))
    assert "明天和Vercel开会" in Page.objects.get(slug="vercel").sections.get().content


def test_a_tag_naming_an_alias_resolves_to_its_entity(push, tenant):
    alibaba = entity_ensure(tenant=tenant, kind="customer", name="阿里巴巴集团", aliases=["Alibaba"])
    push(slack("Discount request", tags={"customer": "Alibaba"}))
    assert list(Entity.objects.filter(kind="customer")) == [alibaba]
    assert "Discount request" in alibaba.page.sections.get().content
    assert entity_ensure(tenant=tenant, kind="customer", name="ALIBABA") == alibaba


def test_tag_with_a_legal_suffix_resolves_to_the_existing_entity(push, known_entities):
    push(slack("renewal", tags={"customer": "Vercel Inc."}))
    assert Entity.objects.filter(kind="customer", key="vercel").count() == 1
    assert Page.objects.get(slug="vercel").sections.count() == 1


def test_entity_names_reach_the_segmenter(tenant):
    from almanac.search.text import segment

    entity_ensure(tenant=tenant, kind="customer", name="字节跳动")
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


def test_inbox_drain_task_ignores_compiled_events_and_missing_tenants(push, tenant):
    from wiki.tasks import inbox_drain_task

    push(slack("Vercel renewal", tags={"customer": "Vercel"}))
    assert inbox_drain_task(tenant.pk) == 0
    assert inbox_drain_task(10**9) == 0
    assert PageSection.objects.count() == 1


def test_sweep_compiles_events_whose_task_was_lost(tenant, alice, monkeypatch):
    from connectors.services.ingest import event_ingest
    from wiki.tasks import SCHEDULES, compile_sweep_task

    monkeypatch.setattr("wiki.receivers.inbox_drain_enqueue", lambda tenant_id: None)  # the task is lost
    event = event_ingest(tenant=tenant, payload=slack("Vercel renewal", tags={"customer": "Vercel"}))[0]
    assert compile_sweep_task() == 0  # too young: its own task may still come
    Event.objects.filter(pk=event.pk).update(received_at=event.received_at - timedelta(minutes=5))
    assert compile_sweep_task() == 1
    assert PageSection.objects.filter(page__slug="vercel").exists()
    assert SCHEDULES[0]["func"] == "wiki.tasks.compile_sweep_task"


def test_a_batch_meeting_an_entity_deleted_since_the_matcher_read_it_compiles_one_by_one(tenant, alice):
    from django.db import connection, transaction

    from connectors.services.ingest import event_ingest
    from wiki.matching import entity_matcher

    gone = entity_ensure(tenant=tenant, kind="customer", name="Vercel")
    assert entity_matcher(tenant.pk, max_age=0).get("customer", "vercel") == gone
    with connection.cursor() as cursor:  # as another process's merge would: no signal here
        cursor.execute("DELETE FROM wiki_page WHERE entity_id = %s", [gone.pk])
        cursor.execute("DELETE FROM wiki_entity WHERE id = %s", [gone.pk])
    with transaction.atomic():  # stored while nothing compiles
        event_ingest(tenant=tenant, payload=slack("Vercel renewal", tags={"customer": "Vercel"}))
    assert compile_pending(tenant=tenant) == 1
    page = Page.objects.get(slug="vercel")
    assert page.entity_id != gone.pk and page.sections.filter(content__contains="Vercel renewal").exists()


def test_a_rolled_back_batch_leaves_no_trace_in_the_cached_entities(tenant, alice, monkeypatch):
    from django.db import transaction

    from connectors.services.ingest import event_ingest
    from wiki.services import backlog

    monkeypatch.setattr("wiki.receivers.inbox_drain_enqueue", lambda tenant_id: None)
    first = event_ingest(
        tenant=tenant, payload=slack("hello", tags={"customer": "Acme"}, ts="1700000501.000100")
    )[0]
    assert compile_event(first.pk) == "compiled"
    private = dict(channel="C999", name="#deal", public=False, members=["alice@acme.com"])
    with transaction.atomic():
        second = event_ingest(
            tenant=tenant,
            payload=slack("secret", tags={"customer": "Acme"}, ts="1700000502.000100", **private),
        )[0]

    def crash(*args, **kwargs):  # after the batch's tags were seen in #deal, in memory and in the database
        raise RuntimeError("deadlock detected")

    monkeypatch.setattr(backlog, "_batch_rebuild", crash)
    assert compile_batch([second.pk]) == 1  # one by one, after the rollback
    assert "slack:channel:C999" in Entity.objects.get(key="acme").named_in
