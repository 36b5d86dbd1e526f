"""Demo history of Acme: Slack export, mailbox, calendar, meeting notes and GitHub issues
(files in demo_data/, Chinese and English). Idempotent: a re-run only counts duplicates."""

from __future__ import annotations

from pathlib import Path

from connectors.importers import calendar, email, github, ingest_all, notes, slack

DATA = Path(__file__).resolve().parent / "demo_data"


def load(company) -> str:
    tenant = company.tenant
    parts = [
        ("slack", slack.export_payloads(tenant=tenant, path=DATA / "slack")),
        ("email", email.mailbox_payloads(tenant=tenant, path=DATA / "mailbox.mbox")),
        ("calendar", calendar.ics_payloads(tenant=tenant, data=(DATA / "calendar.ics").read_bytes())),
        ("notes", notes.notes_payloads(tenant=tenant, folder=DATA / "notes")),
        ("github", github.export_payloads(tenant=tenant, path=DATA / "github_issues.json")),
    ]
    accepted = duplicates = 0
    for _, payloads in parts:
        counts = ingest_all(tenant=tenant, payloads=payloads)
        accepted += counts["accepted"]
        duplicates += counts["duplicates"]
    return f"{accepted} events imported, {duplicates} already present (slack, email, calendar, notes, github)"
