from pathlib import Path

from django.core.management.base import CommandError

from connectors.management.commands._base import ImportCommand
from connectors.notes.importer import notes_payloads


class Command(ImportCommand):
    help = "Import a folder of Markdown meeting notes with front matter (title, date, attendees, customer, project)."
    source_kind = "notes"

    def add_arguments(self, parser):
        parser.add_argument("dir")
        super().add_arguments(parser)

    def payloads(self, *, tenant, source_name, options):
        if not Path(options["dir"]).is_dir():
            raise CommandError(f"{options['dir']} is not a folder")
        return notes_payloads(tenant=tenant, folder=options["dir"], source_name=source_name)
