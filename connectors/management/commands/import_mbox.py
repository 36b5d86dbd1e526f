from connectors.email.importer import mailbox_payloads
from connectors.management.commands._base import ImportCommand


class Command(ImportCommand):
    help = "Import e-mail from an mbox file, an .eml file or a folder of .eml files (threads, recalls)."
    source_kind = "email"

    def add_arguments(self, parser):
        parser.add_argument("path")
        super().add_arguments(parser)

    def payloads(self, *, tenant, source_name, options):
        return mailbox_payloads(tenant=tenant, path=options["path"], source_name=source_name)
