from django.core.management.base import CommandError

from connectors.importers import github
from connectors.management.commands._base import ImportCommand


class Command(ImportCommand):
    help = (
        "Import GitHub issues, pull requests and comments: from a JSON export file, and/or live with --repo."
    )
    source_kind = "github"

    def add_arguments(self, parser):
        parser.add_argument(
            "path", nargs="?", help="JSON export of issues (REST API shape or `gh issue list --json`)"
        )
        parser.add_argument(
            "--repo", action="append", default=[], help="owner/name to fetch live (repeatable)"
        )
        parser.add_argument("--repo-name", default="", help="repository of an export that does not name it")
        parser.add_argument(
            "--base-url", default="", help="API base URL (GitHub Enterprise: https://HOST/api/v3)"
        )
        parser.add_argument("--token", default="", help="token (default: the source's stored credentials)")
        super().add_arguments(parser)

    def payloads(self, *, tenant, source_name, options):
        if not options["path"] and not options["repo"]:
            raise CommandError("give a JSON export PATH and/or --repo owner/name")
        if options["path"]:
            yield from github.export_payloads(
                tenant=tenant, path=options["path"], source_name=source_name, repo_name=options["repo_name"]
            )
        if options["repo"]:
            from connectors.pollers.github import live_payloads

            yield from live_payloads(
                tenant=tenant,
                source_name=source_name,
                repos=options["repo"],
                base_url=options["base_url"],
                token=options["token"],
            )
