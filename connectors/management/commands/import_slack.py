from connectors.management.commands._base import ImportCommand
from connectors.slack.importer import export_payloads


class Command(ImportCommand):
    help = "Import a Slack export (.zip or unpacked folder): public and private channels, threads, edits."
    source_kind = "slack"

    def add_arguments(self, parser):
        parser.add_argument("path")
        super().add_arguments(parser)

    def payloads(self, *, tenant, source_name, options):
        return export_payloads(tenant=tenant, path=options["path"], source_name=source_name)
