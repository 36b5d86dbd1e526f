"""Every htmx endpoint works as a full page without JavaScript: what a page asks for with
`hx-get` / `hx-post` answers a request without `HX-Request` with a whole page (or a redirect
to one), never a bare fragment. The endpoints are found by crawling the reader's pages, so a
new one is checked as soon as a page uses it."""

import re

import pytest

from memories.services.memories import memory_create
from tests.web.conftest import login

pytestmark = pytest.mark.django_db

HX = re.compile(r'hx-(get|post)="([^"]+)"')
PAGES = ["/", "/search?q=pricing", "/memories/", "/wiki/", "/context/", "/settings/"]
LAST = ("/undo", "/delete", "/purge")  # destructive ones after the rest, in this order


def _full_page(response) -> bool:
    body = response.content.decode()
    return "<html" in body and 'id="main"' in body


def _endpoints(body: str) -> set[tuple[str, str]]:
    return {(method, url.replace("&amp;", "&")) for method, url in HX.findall(body)}


def _order(endpoint):
    method, url = endpoint
    rank = next((i + 1 for i, end in enumerate(LAST) if url.endswith(end)), 0)
    return (method != "get", rank, url)


def test_every_htmx_endpoint_answers_a_whole_page_without_javascript(client, alice):
    memory_create(owner=alice, content="Renewal checklist: pricing tiers", memory_type="semantic")
    login(client, alice)
    found, checked = set(), []
    for path in PAGES:
        response = client.get(path)
        assert response.status_code == 200 and _full_page(response), path
        found |= _endpoints(response.content.decode())
    while pending := sorted(found - set(checked), key=_order):
        method, url = pending[0]
        checked.append((method, url))
        if method == "get":
            response = client.get(url, follow=True)
            found |= _endpoints(client.get(url, HTTP_HX_REQUEST="true").content.decode())
        else:
            response = client.post(url, follow=True)
        assert response.status_code < 500 and _full_page(response), (method, url, response.status_code)
        found |= _endpoints(response.content.decode())
        assert len(checked) < 40
    methods = {method for method, _ in checked}
    assert methods == {"get", "post"} and len(checked) >= 5, checked
