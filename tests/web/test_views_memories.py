"""The memory views (web.views.memories.memory_list_view, memory_delete_view): paging, labels, refusals."""

import pytest

from memories.services.memories import memory_create
from tests.web.conftest import ZH, login

pytestmark = pytest.mark.django_db


def test_memories_are_paged_and_the_links_keep_the_filters(client, alice, five_memories):
    body = login(client, alice).get("/memories/", {"q": "renewal", "type": "semantic"}).content.decode()
    assert body.count('class="card" id="memory-') == 2
    assert 'href="?q=renewal&amp;type=semantic&amp;page=2"' in body
    last = client.get("/memories/", {"q": "renewal", "type": "semantic", "page": "3"}).content.decode()
    assert last.count('class="card" id="memory-') == 1
    assert 'href="?q=renewal&amp;type=semantic&amp;page=2"' in last


def test_memory_labels_are_translated(client, alice):
    memory_create(owner=alice, content="I prefer one-page PDFs", memory_type="semantic")
    body = login(client, alice).get("/memories/", **ZH).content.decode()
    assert '<span class="tag">语义记忆</span>' in body and ">semantic<" not in body
    assert ">user<" not in body


def test_refusing_a_delete_says_why_in_the_readers_language(client, alice, bob):
    memory, _ = memory_create(owner=alice, content="Apollo launch moved", scope="project", scope_key="Apollo")
    page = login(client, bob).post(f"/memories/{memory.pk}/delete", **ZH)
    assert page.status_code == 403
    assert "只有" in page.content.decode()
