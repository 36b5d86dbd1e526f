"""Demo history of Acme: Slack export, mailbox, calendar, meeting notes and GitHub issues
(files in demo_data/, Chinese and English). Idempotent: a re-run only counts duplicates."""

from __future__ import annotations

from pathlib import Path

from connectors.calendar.normalize import ics_payloads
from connectors.email.importer import mailbox_payloads
from connectors.github.importer import export_payloads as github_export_payloads
from connectors.notes.importer import notes_payloads
from connectors.services.importer import ingest_all
from connectors.slack.importer import export_payloads as slack_export_payloads

DATA = Path(__file__).resolve().parent / "demo_data"


def load(company) -> str:
    tenant = company.tenant
    parts = [
        ("slack", slack_export_payloads(tenant=tenant, path=DATA / "slack")),
        ("email", mailbox_payloads(tenant=tenant, path=DATA / "mailbox.mbox")),
        ("calendar", ics_payloads(tenant=tenant, data=(DATA / "calendar.ics").read_bytes())),
        ("notes", notes_payloads(tenant=tenant, folder=DATA / "notes")),
        ("github", github_export_payloads(tenant=tenant, path=DATA / "github_issues.json")),
    ]
    accepted = duplicates = 0
    for _, payloads in parts:
        counts = ingest_all(tenant=tenant, payloads=payloads)
        accepted += counts["accepted"]
        duplicates += counts["duplicates"]
    return f"{accepted} events imported, {duplicates} already present (slack, email, calendar, notes, github)"
