"""Mailbox files: mbox, or a Maildir folder."""

from __future__ import annotations

import mailbox
from pathlib import Path

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.email.normalize import PARSE_ERRORS, message_payloads, occurred, parse_bytes


def read_messages(path: str | Path):
    """Messages of an mbox file, one .eml file, or a folder of .eml files."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: no such file or folder")
    if path.is_dir():
        for file in sorted(path.rglob("*.eml")):
            yield parse_bytes(file.read_bytes())
    elif path.suffix.lower() == ".eml":
        yield parse_bytes(path.read_bytes())
    else:
        try:
            box = mailbox.mbox(str(path), factory=None, create=False)
        except mailbox.Error as exc:
            raise ValueError(f"{path}: not an mbox file ({exc})") from exc
        for message in box:
            yield parse_bytes(message.as_bytes())


def mailbox_payloads(*, tenant: Tenant, path: str | Path, source_name: str = "email"):
    """Events of a mailbox in date order (so replies and recalls follow their originals)."""
    messages = sorted(read_messages(path), key=occurred)
    for msg in messages:
        try:
            payloads = message_payloads(tenant=tenant, source_name=source_name, msg=msg)
        except ApplicationError as exc:
            yield exc  # counted as rejected by ingest_all; the messages after it are read
            continue
        except PARSE_ERRORS as exc:
            yield ApplicationError(f"a message the e-mail parser cannot read: {type(exc).__name__}: {exc}")
            continue
        yield from payloads
