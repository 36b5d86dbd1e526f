"""The wiki views (web.views.wiki.wiki_list, wiki_page): source links, paging, translated labels,
a status only its channel may see."""

import re

import pytest

from connectors.services.ingest import event_ingest
from tests.web.conftest import ZH, login, public_event
from wiki.models import PageSection

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
