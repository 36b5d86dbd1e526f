"""The search views (web.views.search.home, search): a query in the URL renders its results, htmx gets
a fragment."""

import pytest

from tests.web.conftest import login

pytestmark = pytest.mark.django_db


def test_home_with_a_query_renders_the_results(client, wiki, bob):
    body = login(client, bob).get("/", {"q": "Vercel discount ceiling"}).content.decode()
    assert "18%" in body


def test_search_opened_directly_is_a_full_page(client, wiki, bob):
    response = login(client, bob).get("/search", {"q": "Vercel discount ceiling"})
    body = response.content.decode()
    assert "<html" in body and "18%" in body and 'value="Vercel discount ceiling"' in body
    assert "HX-Request" in response["Vary"]


def test_search_from_htmx_is_a_fragment_and_pushes_the_url(client, wiki, bob):
    login(client, bob)
    fragment = client.get(
        "/search", {"q": "Vercel discount ceiling"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and "18%" in fragment
    restore = client.get(
        "/search", {"q": "Vercel"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in restore.content.decode()
    assert 'hx-push-url="true"' in client.get("/").content.decode()
