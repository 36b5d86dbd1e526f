"""GitHub poller (PyGithub; `base_url` configurable, so GitHub Enterprise works).

Config: {"repos": ["owner/name", ...], "base_url"?: "https://ghe.example/api/v3"}.
Credentials: a token. Cursor per repo: `issues_since` / `comments_since` (the updated_at of
the last item stored, read again inclusively), saved after every page; each page is read
from that mark, never by page number (see `_pages`).
"""

from __future__ import annotations

from datetime import datetime

from github import Auth, Github, GithubException
from github.GithubObject import NotSet

from connectors.github.normalize import (
    Repo,
    comment_payloads,
    issue_number_of_comment,
    issue_payloads,
    repo_members,
)
from connectors.services.poller import PollError, http_error, secret

DEFAULT_BASE_URL = "https://api.github.com"
PER_PAGE = MAX_PER_PAGE = 100


def client(*, base_url: str, token: str, per_page: int = PER_PAGE, pause: float = 0.25) -> Github:
    # retry=None: backoff is ours (stored, visible), not a sleep inside the worker.
    # `pause` is PyGithub's politeness delay between requests (config.seconds_between_requests).
    auth = Auth.Token(token) if token else None
    return Github(
        base_url=base_url or DEFAULT_BASE_URL,
        auth=auth,
        retry=None,
        per_page=per_page,
        timeout=30,
        seconds_between_requests=pause or None,
    )


def _raw(obj) -> dict:
    # `raw_data` would fetch each object again to "complete" it (one request per issue);
    # the listing already holds every field we read.
    return obj._rawData


def _repo_info(*, tenant, gh_repo) -> Repo:
    try:
        collaborators = [_raw(c) for c in gh_repo.get_collaborators()]
        members = repo_members(tenant=tenant, collaborators=collaborators)
    except GithubException as exc:
        if exc.status in (429,) or exc.status >= 500:
            raise
        members = None  # no permission to list collaborators: keep the stored membership
    return Repo(full_name=gh_repo.full_name, private=bool(gh_repo.private), members=members)


def _since(value: str | None):
    return datetime.fromisoformat(value) if value else NotSet


def _iso(value: str | None) -> str | None:
    return value.replace("Z", "+00:00") if value else None


def _pages(listing, *, since: str | None, per_page: int):
    """The items of a `sort=updated&direction=asc` listing, page by page, from `since` on.

    Every page is read as page 1 with `since` = the last updated_at read: walking page
    numbers skips items, as one updated meanwhile moves to the end and the rest shift back
    onto a page already read. The items at that updated_at come again (duplicates). When
    that brings nothing new (a whole page shares one updated_at), the next page number is
    read with the same `since`, else the same page would come back for ever.
    """
    page, previous = 0, None
    while True:
        items = [_raw(item) for item in listing(since=_since(since)).get_page(page)]
        seen = [(item.get("id"), item.get("updated_at")) for item in items]
        if seen == previous and page > 0:
            return  # the server ignores the page number: nothing more to be had
        if seen != previous:
            yield items
        if len(items) < per_page:
            return
        last = _iso(items[-1].get("updated_at"))
        if last and last != since and seen != previous:
            since, page = last, 0
        else:
            page += 1
        previous = seen


def repo_chunks(
    *, tenant, gh: Github, source_name: str, full_name: str, state: dict, per_page: int = PER_PAGE
):
    """(what, payloads, new high-water mark) per page of issues, then of comments."""
    gh_repo = gh.get_repo(full_name)
    repo = _repo_info(tenant=tenant, gh_repo=gh_repo)
    high = state.get("issues_since")

    def issues(since):
        return gh_repo.get_issues(state="all", sort="updated", direction="asc", since=since)

    for page in _pages(issues, since=high, per_page=per_page):
        batch = []
        for issue in page:
            batch.extend(issue_payloads(source_name=source_name, repo=repo, issue=issue))
            high = issue.get("updated_at") or high
        yield "issues_since", batch, high
    high = state.get("comments_since")

    def comments(since):
        return gh_repo.get_issues_comments(sort="updated", direction="asc", since=since)

    for page in _pages(comments, since=high, per_page=per_page):
        batch = []
        for comment in page:
            number = issue_number_of_comment(comment)
            if number is not None:
                batch.extend(
                    comment_payloads(source_name=source_name, repo=repo, number=number, comment=comment)
                )
            high = comment.get("updated_at") or high
        yield "comments_since", batch, high


def _translate(exc: GithubException, what: str) -> PollError:
    detail = exc.data.get("message", "") if isinstance(exc.data, dict) else ""
    return http_error(what=what, status=exc.status or 0, headers=exc.headers, detail=detail)


def poll(*, source, cursor: dict, save) -> None:
    repos = source.config.get("repos") or []
    if not repos:
        raise PollError("github: config.repos is empty")
    # GitHub serves at most 100 a page; a shorter page than asked for is taken as the last.
    per_page = max(1, min(int(source.config.get("per_page", PER_PAGE)), MAX_PER_PAGE))
    pause = float(source.config.get("seconds_between_requests", 0.25))
    gh = client(
        base_url=source.config.get("base_url", ""), token=secret(source), per_page=per_page, pause=pause
    )
    cursor.setdefault("repos", {})
    for full_name in repos:
        state = cursor["repos"].setdefault(full_name, {})
        try:
            for field, payloads, high in repo_chunks(
                tenant=source.tenant,
                gh=gh,
                source_name=source.name,
                full_name=full_name,
                state=state,
                per_page=per_page,
            ):
                state[field] = _iso(high)
                save(payloads, cursor)
        except GithubException as exc:
            raise _translate(exc, f"github {full_name}") from exc


def live_payloads(*, tenant, source_name: str, repos: list[str], base_url: str = "", token: str = ""):
    """All issues and comments of `repos`, for `import_github --repo` (no cursor)."""
    from connectors.models import Source

    if not token:
        source = Source.objects.filter(tenant=tenant, name=source_name).first()
        token = secret(source) if source and source.credentials else ""
    gh = client(base_url=base_url, token=token)
    for full_name in repos:
        try:
            for _, payloads, _ in repo_chunks(
                tenant=tenant, gh=gh, source_name=source_name, full_name=full_name, state={}
            ):
                yield from payloads
        except GithubException as exc:
            raise _translate(exc, f"github {full_name}") from exc
