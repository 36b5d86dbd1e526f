from pathlib import Path

from connectors.calendar.normalize import ics_payloads
from connectors.calendar.poller import fetch_feed
from connectors.management.commands._base import ImportCommand


class Command(ImportCommand):
    help = "Import an ICS calendar from a file or an http(s) feed URL."
    source_kind = "calendar"

    def add_arguments(self, parser):
        parser.add_argument("path_or_url")
        super().add_arguments(parser)

    def payloads(self, *, tenant, source_name, options):
        target = options["path_or_url"]
        data = fetch_feed(target) if target.startswith(("http://", "https://")) else Path(target).read_bytes()
        return ics_payloads(tenant=tenant, data=data, source_name=source_name)
