from io import StringIO

import pytest
from django.core.management import call_command

from almanac.embedding_columns import current_dimension
from memories.models import Memory
from memories.selectors import memory_search
from memories.services.memories import memory_create

# Retyping a column is schema work: the owner role's (the app's runtime role may not).
pytestmark = [pytest.mark.django_db, pytest.mark.db_owner]


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


def test_a_fresh_install_with_another_dimension_gets_columns_of_that_size(settings, alice, embedding_server):
    from wiki.models import PageSection

    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_URL = embedding_server[0]
    settings.EMBEDDING_MODEL = "tiny"
    settings.EMBEDDING_DIM = 4
    call_command("migrate", verbosity=0)  # nothing to migrate: post_migrate fits the empty columns
    assert current_dimension(Memory._meta.db_table) == 4
    assert current_dimension(PageSection._meta.db_table) == 4
    memory, _ = memory_create(owner=alice, content="Invoices for Vercel go out on the 5th")
    assert memory_search(user=alice, query="Vercel invoices")[0].memory.pk == memory.pk


def test_columns_holding_vectors_of_another_size_wait_for_reembed(settings, alice, capsys):
    from almanac.embedding_columns import empty_columns_fit

    memory_create(owner=alice, content="Invoices for Vercel go out on the 5th")
    settings.EMBEDDING_DIM = 4
    assert empty_columns_fit() == [Memory._meta.db_table]
    assert current_dimension(Memory._meta.db_table) == 512  # the rows' vectors are kept
    call_command("migrate", verbosity=0)
    assert "run `manage.py reembed`" in capsys.readouterr().err


def test_reembed_refuses_a_batch_below_one():
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="--batch must be 1 or more"):
        call_command("reembed", "--batch", "0", stdout=StringIO())


def test_another_dimension_needs_no_migration():
    """EMBEDDING_DIM sizes the columns through migrate/reembed: `makemigrations --check`
    (part of `make test`) stays clean on an install with another size."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from django.db import connection

    db = connection.settings_dict
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@/{db['NAME']}?host={db['HOST']}&port={db['PORT']}",
        "EMBEDDING_DIM": "768",
    }
    code = (
        "import django; django.setup(); from django.core.management import call_command; "
        "from memories.models import Memory; print(Memory._meta.get_field('embedding').db_type(None)); "
        "call_command('makemigrations', '--check', '--dry-run', verbosity=1)"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[0] == "vector(768)"
    assert "No changes detected" in out.stdout


def test_reembed_second_fills_with_progress_and_resumes(settings, alice, monkeypatch):
    from almanac.search import second

    for text in (
        "Invoices for Vercel go out on the 5th",
        "Standup moved to 9:30",
        "The Q3 offsite is in Lisbon",
    ):
        memory_create(owner=alice, content=text)  # lane off: no second vectors yet
    settings.SEARCH_SECOND_ENCODER = "e5"
    real, calls = second.embed_passages, []

    def failing_second_batch(texts):
        calls.append(texts)
        if len(calls) == 2:
            raise RuntimeError("stopped")
        return real(texts)

    monkeypatch.setattr(second, "embed_passages", failing_second_batch)
    out = StringIO()
    with pytest.raises(RuntimeError):
        call_command("reembed", "--second", "--batch", "1", stdout=out)
    assert "memories.Memory: 3 rows to embed with e5" in out.getvalue()
    assert "memories.Memory: 1 of 3" in out.getvalue()
    assert Memory.objects.filter(embedding_e5__isnull=True).count() == 2

    out = StringIO()
    call_command("reembed", "--second", "--batch", "1", stdout=out)  # resumes with the two left
    assert "2 rows to embed" in out.getvalue() and "memories.Memory: 2 of 2" in out.getvalue()
    assert "memories.Memory: 2 rows embedded with e5" in out.getvalue()
    assert not Memory.objects.filter(embedding_e5__isnull=True).exists()
    hits = memory_search(user=alice, query="where is the offsite this quarter")
    assert hits[0].memory.content == "The Q3 offsite is in Lisbon" and hits[0].breakdown["second_rank"] == 1


def test_reembed_second_needs_the_setting():
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="SEARCH_SECOND_ENCODER"):
        call_command("reembed", "--second", stdout=StringIO())
