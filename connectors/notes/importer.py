"""A folder of Markdown notes, read whole."""

from __future__ import annotations

from pathlib import Path

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.notes.normalize import note_payload


def note_files(folder: str | Path) -> list[Path]:
    return sorted(
        p for p in Path(folder).rglob("*") if p.suffix.lower() in {".md", ".markdown"} and p.is_file()
    )


def notes_payloads(*, tenant: Tenant, folder: str | Path, source_name: str = "notes"):
    root = Path(folder)
    for path in note_files(root):
        try:
            yield note_payload(tenant=tenant, source_name=source_name, root=root, path=path)
        except ApplicationError as exc:
            yield exc  # counted as rejected by ingest_all; the files after it are read
