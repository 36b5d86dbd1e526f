"""Storage parameters the read paths rely on, as the migrations leave the database."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def _options(relation: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass", [relation])
        return cursor.fetchone()[0] or []


@pytest.mark.parametrize("index", ["memories_memory_acl_search_gin", "wiki_section_acl_search_gin"])
def test_keyword_indexes_keep_no_pending_list(index):
    # With a pending list, every keyword lane scans all entries not yet merged into the GIN.
    assert "fastupdate=off" in _options(index)


def test_memory_pages_keep_room_for_hit_counts():
    # (tests/memories/test_recall.py checks that a touched row stays on its page.)
    assert "fillfactor=80" in _options("memories_memory")
