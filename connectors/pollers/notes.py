"""Meeting-notes folder poller. Config: {"folder"}. Unchanged files are duplicates; an edited
file becomes a new version."""

from __future__ import annotations

from pathlib import Path

from connectors.importers.notes import note_files, note_payload
from connectors.pollers import PollError


def poll(*, source, cursor: dict, save) -> None:
    folder = Path(source.config.get("folder") or "")
    if not folder.is_dir():
        raise PollError(f"notes: {folder} is not a folder")
    for path in note_files(folder):
        # One file at a time: versions are computed against what is already stored.
        save([note_payload(tenant=source.tenant, source_name=source.name, root=folder, path=path)], cursor)
