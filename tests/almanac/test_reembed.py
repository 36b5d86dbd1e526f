from io import StringIO

import pytest
from django.core.management import call_command

from almanac.management.commands.reembed import current_dimension
from memories.models import Memory
from memories.selectors import memory_search
from memories.services.memories import memory_create

pytestmark = pytest.mark.django_db


def test_reembed_same_dimension_keeps_search_working(alice):
    memory, _ = memory_create(owner=alice, content="Invoices for Vercel go out on the 5th")
    call_command("reembed", stdout=StringIO())
    assert current_dimension(Memory._meta.db_table) == 512
    assert memory_search(user=alice, query="when do Vercel invoices go out")[0].memory.pk == memory.pk


def test_reembed_changes_the_dimension(settings, alice, embedding_server):
    memory_create(owner=alice, content="Invoices for Vercel go out on the 5th")
    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_URL = embedding_server[0]
    settings.EMBEDDING_MODEL = "tiny"
    settings.EMBEDDING_DIM = 4
    out = StringIO()
    call_command("reembed", stdout=out)
    assert "memories.Memory: 1 rows embedded at 4 dimensions" in out.getvalue()
    assert current_dimension(Memory._meta.db_table) == 4
    assert len(Memory.objects.get().embedding) == 4
