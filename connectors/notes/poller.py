"""Meeting-notes folder poller. Config: {"folder"}. Unchanged files are duplicates; an edited
file becomes a new version. A file that cannot be read is logged and counted as rejected on
every poll until it is fixed; the files after it are read as usual."""

from __future__ import annotations

import logging
from pathlib import Path

from almanac.errors import ApplicationError
from connectors.notes.importer import note_files
from connectors.notes.normalize import note_payload
from connectors.services.poller import PollError

log = logging.getLogger(__name__)


def poll(*, source, cursor: dict, save) -> None:
    folder = Path(source.config.get("folder") or "")
    if not folder.is_dir():
        raise PollError(f"notes: {folder} is not a folder")
    for path in note_files(folder):
        # One file at a time: versions are computed against what is already stored.
        try:
            payload = note_payload(tenant=source.tenant, source_name=source.name, root=folder, path=path)
        except ApplicationError as exc:
            log.warning("notes %s: skipped %s", source, exc.message)
            save([], cursor, rejected=1)
            continue
        save([payload], cursor)
