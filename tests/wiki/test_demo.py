"""The demo company's wiki: connectors import the files, the wiki compiles them."""

from django.core.management import call_command

from almanac.demo import load_company
from connectors import demo as connectors_demo
from wiki import demo
from wiki.models import Page, PageSection


def test_demo_compiles_the_inbox_and_is_idempotent(db, monkeypatch):
    company = load_company()
    connectors_demo.load(company)
    first = demo.load(company)
    assert "events compiled" in first and "failed" not in first
    snapshot = sorted(PageSection.objects.values_list("page__slug", "thread_key", "content"))
    assert Page.objects.filter(kind="person").count() >= 5
    assert Page.objects.filter(kind="customer").exists() and Page.objects.filter(kind="project").exists()
    demo.load(company)
    assert sorted(PageSection.objects.values_list("page__slug", "thread_key", "content")) == snapshot


def test_wiki_compile_command(tenant, alice, push, capsys):
    call_command("wiki_compile", "acme")
    assert "events compiled" in capsys.readouterr().out
    assert Page.objects.filter(kind="person").count() == 1
