"""Rebuilding the wiki from the inbox (wiki.services.rebuild, `manage.py wiki_rebuild`) and
relinking old threads when an entity or alias is added or changed (wiki.services.compiler.
entity_relink)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from wiki.models import Entity, Page, PageSection, Rebuild
from wiki.services.entities import entity_create, entity_update, page_ensure
from wiki.services.merge import entity_merge

from .conftest import slack


def _pages_of(thread_key: str) -> set[str]:
    return set(PageSection.objects.filter(thread_key=thread_key).values_list("page__title", flat=True))


def test_adding_an_alias_moves_old_threads_to_the_page(tenant, push, django_capture_on_commit_callbacks):
    old = push(slack("Rocket Co wants a quote for 40 seats", channel="CC", name="#customers"))
    other = push(slack("Lunch at noon", channel="CC", name="#customers", minutes=1))
    assert _pages_of(old.thread_key) == {"#customers"}
    entity = entity_create(tenant=tenant, kind="customer", name="Acme Rockets")
    with django_capture_on_commit_callbacks(execute=True):  # the relink runs after the save commits
        entity_update(entity=entity, aliases=["Rocket Co"])
    assert _pages_of(old.thread_key) == {"Acme Rockets"}
    assert _pages_of(other.thread_key) == {"#customers"}  # a thread not naming it stays


def test_creating_an_entity_moves_chinese_threads_naming_it(tenant, push, django_capture_on_commit_callbacks):
    old = push(slack("宁德时代 的合同下周签", channel="CC", name="#customers"))
    with django_capture_on_commit_callbacks(execute=True):
        entity_create(tenant=tenant, kind="customer", name="宁德时代")
    assert _pages_of(old.thread_key) == {"宁德时代"}


def test_merging_entities_leaves_threads_naming_the_merged_one_on_the_survivor(
    tenant, push, django_capture_on_commit_callbacks
):
    globex = entity_create(tenant=tenant, kind="customer", name="Globex", aliases=[])
    old = push(slack("GBX signed", channel="CC", name="#customers"))
    with django_capture_on_commit_callbacks(execute=True):
        gbx = entity_create(tenant=tenant, kind="customer", name="Gibbex", aliases=["GBX"])
    assert _pages_of(old.thread_key) == {"Gibbex"}
    later = push(slack("Gibbex renewal", channel="CD", name="#deals", minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        entity_merge(survivor=globex, merged=gbx, actor="admin")
    assert _pages_of(old.thread_key) == _pages_of(later.thread_key) == {"Globex"}


def test_wiki_rebuild_relinks_what_no_relink_reached_and_reports_progress(tenant, push):
    old = push(slack("Rocket Co wants a quote", channel="CC", name="#customers"))
    push(slack("Rocket Co signed", channel="CC", name="#customers", minutes=3))
    # an entity made without the service (a restore, a raw import): nothing relinked
    entity = Entity.objects.create(tenant=tenant, kind="customer", name="Rocket Co", key="rocket co",
                                   alias_keys=["rocket co"], named_in=[tenant.group_key])  # fmt: skip
    page_ensure(entity=entity)
    assert _pages_of(old.thread_key) == {"#customers"}
    out = StringIO()
    call_command("wiki_rebuild", "--tenant", "acme", stdout=out)
    assert _pages_of(old.thread_key) == {"Rocket Co"}
    rebuild = Rebuild.objects.get()
    assert (rebuild.state, rebuild.events_done, rebuild.events_total, rebuild.threads_total) == (
        "done",
        2,
        2,
        2,
    )
    assert "events 2/2, threads 2/2" in out.getvalue()


def test_wiki_rebuild_twice_changes_nothing(tenant, push):
    push(slack("Vercel renewal", channel="CS", name="#sales", tags={"customer": "Vercel"}))
    push(slack("Vercel asked for SSO", channel="CS", name="#sales", minutes=2))
    call_command("wiki_rebuild", "--tenant", "acme", stdout=StringIO())
    before = sorted(PageSection.objects.values_list("id", "page_id", "content", "updated_at"))
    history = PageSection.history.count()
    call_command("wiki_rebuild", "--tenant", "acme", stdout=StringIO())
    assert sorted(PageSection.objects.values_list("id", "page_id", "content", "updated_at")) == before
    assert PageSection.history.count() == history


def test_wiki_rebuild_of_one_page_rebuilds_its_threads_and_those_naming_it(tenant, push):
    push(slack("Vercel renewal", channel="CS", name="#sales", tags={"customer": "Vercel"}))
    push(slack("Unrelated chatter", channel="CG", name="#general"))
    entity = Entity.objects.get(name="Vercel")
    out = StringIO()
    call_command(
        "wiki_rebuild", "--tenant", "acme", "--page", Page.objects.get(entity=entity).slug, stdout=out
    )
    rebuild = Rebuild.objects.get()
    assert (rebuild.state, rebuild.threads_total) == ("done", 1)
    assert "status" not in out.getvalue() and "done" in out.getvalue()


def test_wiki_rebuild_in_the_background_runs_as_a_task(tenant, push):
    push(slack("Vercel renewal", channel="CS", name="#sales", tags={"customer": "Vercel"}))
    out = StringIO()
    call_command("wiki_rebuild", "--tenant", "acme", "--background", stdout=out)  # tests run tasks inline
    assert "queued" in out.getvalue() and "done, events 1/1" in out.getvalue()
    status = StringIO()
    call_command("wiki_rebuild", "--status", stdout=status)
    assert "done, events 1/1" in status.getvalue()


def test_wiki_rebuild_refuses_an_unknown_tenant_or_page(tenant):
    with pytest.raises(CommandError, match="no tenant"):
        call_command("wiki_rebuild", "--tenant", "nope", stdout=StringIO())
    with pytest.raises(CommandError, match="no page"):
        call_command("wiki_rebuild", "--tenant", "acme", "--page", "nope", stdout=StringIO())
    with pytest.raises(CommandError, match="needs --tenant"):
        call_command("wiki_rebuild", "--page", "x", stdout=StringIO())
