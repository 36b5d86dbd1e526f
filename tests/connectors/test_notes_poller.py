"""The meeting-notes poller and `import_notes`: one bad file never stops the rest."""

import pytest
from django.core.management import call_command

from connectors.models import Event, SyncCursor
from connectors.services.poller import poll_source
from connectors.services.sources import source_ensure

pytestmark = pytest.mark.django_db


# --- one bad file --------------------------------------------------------------------------


@pytest.fixture
def notes_folder(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a-good.md").write_text("---\ntitle: Apollo sync\nattendees: [carol@acme.example]\n---\nok\n")
    (folder / "b-yaml.md").write_text("---\ntitle: [unclosed\n---\nbroken YAML\n")
    (folder / "c-attendees.md").write_text("---\ntitle: Five\nattendees: 5\n---\nwrong type\n")
    (folder / "d-public.md").write_text('---\ntitle: Leak\npublic: "false"\n---\nstring public\n')
    (folder / "e-good.md").write_text("---\ntitle: Zephyr sync\n---\nlater file\n")
    return folder


def test_notes_poller_skips_bad_files_and_counts_them(company, notes_folder, caplog):
    source = source_ensure(tenant=company.tenant, name="notes", config={"folder": str(notes_folder)})
    result = poll_source(source=source)
    assert result == {"accepted": 2, "duplicates": 0, "rejected": 3, "state": "ok"}
    assert set(Event.objects.values_list("title", flat=True)) == {"Apollo sync", "Zephyr sync"}
    for name in ("b-yaml.md", "c-attendees.md", "d-public.md"):
        assert name in caplog.text
    assert SyncCursor.objects.get(source=source).last_error == ""


def test_import_notes_skips_bad_files(company, notes_folder, capsys, caplog):
    call_command("import_notes", str(notes_folder), "--no-progress")
    assert "notes: 2 new events, 0 duplicates, 3 rejected" in capsys.readouterr().out
    assert "b-yaml.md" in caplog.text and "attendees must be" in caplog.text
    assert "public must be true or false" in caplog.text
    assert not Event.objects.filter(title="Leak").exists()
