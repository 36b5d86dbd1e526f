import sys
from pathlib import Path

from django.core.management.base import CommandError

from connectors.github.importer import export_payloads
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
        token = parser.add_mutually_exclusive_group()
        token.add_argument(
            "--token", default="", help="token (default: the source's stored credentials; visible in ps)"
        )
        token.add_argument("--token-file", default="", help="read the token from this file (- for stdin)")
        super().add_arguments(parser)

    def payloads(self, *, tenant, source_name, options):
        if not options["path"] and not options["repo"]:
            raise CommandError("give a JSON export PATH and/or --repo owner/name")
        if options["path"]:
            yield from export_payloads(
                tenant=tenant, path=options["path"], source_name=source_name, repo_name=options["repo_name"]
            )
        if options["repo"]:
            from connectors.github.poller import live_payloads

            token = options["token"] or read_token(options["token_file"])

            yield from live_payloads(
                tenant=tenant,
                source_name=source_name,
                repos=options["repo"],
                base_url=options["base_url"],
                token=token,
            )


def read_token(path: str) -> str:
    """The token in `path` (or stdin for -), stripped; "" when no file is given."""
    if not path:
        return ""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"--token-file: cannot read {path}: {exc}") from exc
    token = text.strip()
    if not token:
        raise CommandError(f"--token-file: {path} is empty")
    return token
