"""GitHub's JSON exports: a list of issues (the REST API's shape, or `gh issue list --json`),
or {"repository": {...}, "issues": [...]}, or a list of those."""

from __future__ import annotations

import json
from pathlib import Path

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.github.normalize import Repo, comment_payloads, issue_payloads, repo_members


def _repo_of(issue: dict, default: str) -> str:
    url = str(issue.get("repository_url") or "")
    if "/repos/" in url:
        return url.split("/repos/", 1)[1]
    return default


def export_payloads(*, tenant: Tenant, path: str | Path, source_name: str = "github", repo_name: str = ""):
    """Events of a JSON export: a list of issues, or {"repository": {...}, "issues": [...]},
    or a list of such objects. Comments may be embedded in each issue as a list."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ApplicationError(f"cannot read GitHub export {path}: {exc}") from exc
    bundles = data if isinstance(data, list) and data and "issues" in data[0] else [data]
    for bundle in bundles:
        issues = bundle["issues"] if isinstance(bundle, dict) else bundle
        meta = bundle.get("repository", {}) if isinstance(bundle, dict) else {}
        collaborators = meta.get("collaborators")
        members = (
            repo_members(tenant=tenant, collaborators=collaborators) if collaborators is not None else None
        )
        for issue in issues:
            name = meta.get("full_name") or _repo_of(issue, repo_name)
            if not name:
                raise ApplicationError("the export does not name its repository: pass --repo-name owner/name")
            repo = Repo(full_name=name, private=bool(meta.get("private", True)), members=members)
            yield from issue_payloads(source_name=source_name, repo=repo, issue=issue)
            for comment in issue.get("comments") if isinstance(issue.get("comments"), list) else []:
                yield from comment_payloads(
                    source_name=source_name, repo=repo, number=issue["number"], comment=comment
                )
