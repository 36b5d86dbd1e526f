"""The wiki views (web.views.wiki.wiki_list, wiki_page): source links, paging, translated labels,
a status only its channel may see."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from connectors.services.ingest import event_ingest
from tests.web.conftest import ZH, login, private_event, public_event
from wiki.models import Page, PageSection

pytestmark = pytest.mark.django_db


def set_source_urls(url):
    PageSection.objects.update(source_list=[{"source": "slack", "url": url, "occurred_at": None}])


@pytest.mark.parametrize(
    "url", ["javascript:alert(document.cookie)", " JavaScript:alert(1)", "data:text/html,x"]
)
def test_a_source_url_that_is_not_http_is_shown_as_plain_text(client, wiki, charlie, url):
    set_source_urls(url)
    body = login(client, charlie).get("/wiki/vercel/").content.decode()
    assert "alert" not in body and "data:text" not in body
    assert "slack" in body


def test_an_http_source_url_is_a_link_that_does_not_leak_the_opener(client, wiki, charlie):
    set_source_urls("https://acme.slack.com/archives/CGEN/p1700000001000100")
    body = login(client, charlie).get("/wiki/vercel/").content.decode()
    assert (
        '<a href="https://acme.slack.com/archives/CGEN/p1700000001000100" rel="noopener noreferrer">' in body
    )


def test_a_section_s_sources_are_named_once_with_each_link(client, wiki, charlie):
    one, two = "https://chat.example/archives/p1", "https://chat.example/archives/p2"
    PageSection.objects.update(
        source_list=[{"source": "slack", "url": url, "occurred_at": None} for url in (one, two, "", two)]
    )
    body = login(client, charlie).get("/wiki/vercel/", **ZH).content.decode()
    source = re.search(r'<span class="source">(.*?)</span>\s*<span class="container">', body, re.S).group(1)
    assert source.count("slack") == 2  # the name once, and in the second link's label
    assert f'<a href="{one}" rel="noopener noreferrer">slack</a>' in source
    assert f'<a href="{two}" rel="noopener noreferrer" aria-label="slack，链接 2">[2]</a>' in source
    assert "×4" in source and 'title="4 条"' in source


def test_wiki_list_is_paged_with_the_kind_kept(
    client, wiki, tenant, bob, monkeypatch, django_capture_on_commit_callbacks
):
    stripe = public_event()
    stripe.update(
        external_id="CGEN/1700000002.000100", text="Stripe asked for a demo.", tags={"customer": "Stripe"}
    )
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(tenant=tenant, payload=stripe)
    monkeypatch.setattr("web.views.wiki.PER_PAGE", 1)
    login(client, bob)
    first = client.get("/wiki/", {"kind": "customer"}).content.decode()
    second = client.get("/wiki/", {"kind": "customer", "page": "2"}).content.decode()
    shown = [re.findall(r'href="/wiki/([^/"]+)/"', body) for body in (first, second)]
    assert sorted(shown[0] + shown[1]) == ["stripe", "vercel"]
    assert 'href="?kind=customer&amp;page=2"' in first and 'href="?kind=customer&amp;page=1"' in second


def test_wiki_labels_are_translated(client, wiki, charlie):
    body = login(client, charlie).get("/wiki/", **ZH).content.decode()
    assert '<span class="tag">客户</span>' in body and '<span class="tag">customer</span>' not in body
    page = client.get("/wiki/vercel/", **ZH).content.decode()
    assert '<span class="tag">客户</span>' in page


def test_a_status_set_in_a_private_channel_shows_only_to_its_members(client, wiki, bob, charlie):
    # an open issue of the private channel's: a customer's open items are counted for their
    # readers only, and a closed one never closes a customer (docs/wiki.md, Status from the facts)
    PageSection.objects.filter(container_key="slack:channel:CFIN").update(work_kind="issue", work_open=True)
    login(client, bob)
    body = client.get("/wiki/vercel/").content.decode()
    assert "1 open issue" in body and '<span class="tag">active</span>' in body
    client.logout()
    login(client, charlie)
    for path in ("/wiki/", "/wiki/vercel/"):
        body = client.get(path).content.decode()
        assert "open issue" not in body and '<span class="tag">active</span>' in body
    PageSection.objects.filter(container_key="slack:channel:CFIN").update(work_open=False)
    client.logout()
    login(client, bob)
    assert "closed" not in client.get("/wiki/vercel/").content.decode()


def test_what_decides_the_status_is_said_in_the_reader_s_language(client, wiki, bob):
    PageSection.objects.filter(container_key="slack:channel:CFIN").update(work_kind="issue", work_open=True)
    body = login(client, bob).get("/wiki/vercel/", **ZH).content.decode()
    detail = re.search(r'<p class="muted status-detail">([^<]*)</p>', body).group(1)
    assert detail == "1 个未关闭的 issue"
    PageSection.objects.filter(container_key="slack:channel:CFIN").update(work_kind="pull_request")
    body = client.get("/wiki/vercel/").content.decode()
    assert re.search(r'<p class="muted status-detail">([^<]*)</p>', body).group(1) == "1 open PR"
    Page.objects.filter(slug="vercel").update(
        status_manual="closed", status_manual_by="ann", status_manual_at=timezone.now()
    )
    body = client.get("/wiki/vercel/", **ZH).content.decode()
    detail = re.search(r'<p class="muted status-detail">([^<]*)</p>', body).group(1)
    assert detail == f"由 ann 于 {timezone.now():%Y-%m-%d} 标为已关闭"


def _ingest(tenant, capture, *events):
    with capture(execute=True):
        for event in events:
            event_ingest(tenant=tenant, payload=event)


def test_a_section_is_rendered_as_sanitised_markdown(client, tenant, bob, django_capture_on_commit_callbacks):
    text = "Vercel: **discount** ceiling\n- one\n- two\n<script>alert(1)</script> [x](javascript:alert(2)) ![t](https://t.example/p.png)"
    _ingest(tenant, django_capture_on_commit_callbacks, private_event(text=text))
    body = login(client, bob).get("/wiki/vercel/").content.decode()
    assert "<strong>discount</strong>" in body and "<li>one</li>" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script>alert" not in body
    assert 'href="javascript' not in body and "<img" not in body


def _article(body, text):
    """The section card of the page that holds `text`."""
    return next(card for card in body.split("<article")[1:] if text in card)


def test_each_section_says_who_can_see_it_and_marks_the_restricted_one(client, wiki, bob, charlie):
    body = login(client, bob).get("/wiki/vercel/").content.decode()
    private, public = _article(body, "discount ceiling"), _article(body, "kickoff call")
    assert "Restricted" in private and "Visible to: members of #finance-internal" in private
    assert "Restricted" not in public and "Visible to: everyone at Acme" in public
    zh = client.get("/wiki/vercel/", **ZH).content.decode()
    assert "受限" in _article(zh, "discount ceiling") and "Acme 全体成员" in _article(zh, "kickoff call")
    assert "#finance-internal 的成员" in _article(zh, "discount ceiling")


def test_who_can_see_a_section_is_listed_with_the_languages_separator(client, wiki, bob):
    PageSection.objects.filter(content__contains="discount ceiling").update(
        acl=["slack:channel:CFIN", "dept:finance"]
    )
    body = login(client, bob).get("/wiki/vercel/").content.decode()
    assert "Visible to: Finance department, members of #finance-internal" in _article(
        body, "discount ceiling"
    )
    zh = _article(client.get("/wiki/vercel/", **ZH).content.decode(), "discount ceiling")
    assert "Finance 部门、#finance-internal 的成员" in zh and "，" not in zh.split("visible-to")[1]


def test_a_sections_sources_are_listed_with_the_languages_separator(client, wiki, charlie):
    PageSection.objects.update(
        source_list=[{"source": name, "url": "", "occurred_at": None} for name in ("slack", "github")]
    )
    body = login(client, charlie).get("/wiki/vercel/").content.decode()
    assert '<span class="src">slack</span>, <span class="src">github</span>' in body
    zh = client.get("/wiki/vercel/", **ZH).content.decode()
    assert '<span class="src">slack</span>、<span class="src">github</span>' in zh


def test_the_summary_is_on_top_and_made_from_what_the_reader_sees(client, wiki, bob, charlie):
    body = login(client, bob).get("/wiki/vercel/").content.decode()
    assert body.index('class="card summary"') < body.index("<article")
    summary = body.split('class="card summary"', 1)[1].split("</section>", 1)[0]
    assert "<li>" in summary and "\n- " not in summary  # its list rendered, not shown as dashes
    client.logout()
    body = login(client, charlie).get("/wiki/vercel/").content.decode()
    assert 'class="card summary"' in body and "18%" not in body


def test_the_page_says_when_it_was_updated_and_warns_when_that_is_long_ago(client, wiki, bob, settings):
    now = timezone.now()
    PageSection.objects.update(occurred_at=now - timedelta(days=3))
    body = login(client, bob).get("/wiki/vercel/").content.decode()
    assert f"newest information from {(now - timedelta(days=3)):%Y-%m-%d}" in body
    assert "out-of-date" not in body
    PageSection.objects.update(occurred_at=now - timedelta(days=200))
    body = client.get("/wiki/vercel/").content.decode()
    assert 'class="card warn out-of-date"' in body and "may be out of date" in body
    assert "可能已过时" in client.get("/wiki/vercel/", **ZH).content.decode()
    settings.WIKI_PAGE_STALE_DAYS = 365
    assert "out-of-date" not in client.get("/wiki/vercel/").content.decode()


def test_a_status_decided_by_sections_the_reader_cannot_see_says_so(
    client, tenant, bob, charlie, django_capture_on_commit_callbacks
):
    apollo = {"project": "Apollo"}
    _ingest(
        tenant,
        django_capture_on_commit_callbacks,
        private_event(text="Apollo: the export job fails on large files.", tags=apollo),
        public_event() | {"text": "Apollo demo is on Friday.", "tags": apollo},
    )
    note = "sections you cannot see would change it"
    login(client, charlie)
    assert note not in client.get("/wiki/apollo/").content.decode()  # no work anywhere: one status
    PageSection.objects.filter(container_key="slack:channel:CFIN").update(work_kind="issue", work_open=True)
    body = client.get("/wiki/apollo/").content.decode()
    assert '<span class="tag">active</span>' in body and note in body and "export job" not in body
    client.logout()
    body = login(client, bob).get("/wiki/apollo/").content.decode()
    assert '<span class="tag">open</span>' in body and note not in body


def test_a_customer_with_an_open_issue_is_active_in_the_list_as_on_its_page(client, wiki, bob):
    PageSection.objects.filter(container_key="slack:channel:CFIN").update(work_kind="issue", work_open=True)
    body = login(client, bob).get("/wiki/").content.decode()
    assert '<span class="tag">active</span>' in body and '<span class="tag">open</span>' not in body
