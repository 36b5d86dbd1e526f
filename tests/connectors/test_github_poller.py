import pytest
from django.core.management import call_command

from almanac.selectors import group_members
from connectors.models import Event, SyncCursor
from connectors.services.poller import poll_source
from connectors.services.sources import source_ensure, source_set_credentials
from tests.connectors.servers import http_server

pytestmark = pytest.mark.django_db


def issue(base, number, *, state="open", updated="2026-11-10T10:00:00Z", closed=None, pr=False, labels=()):
    data = {
        "id": 1000 + number,
        "number": number,
        "title": f"Issue {number} for Vercel",
        "body": f"body {number} 中文描述",
        "state": state,
        "created_at": "2026-11-01T10:00:00Z",
        "updated_at": updated,
        "closed_at": closed,
        "html_url": f"https://github.example/acme/apollo/{'pull' if pr else 'issues'}/{number}",
        "url": f"{base}/repos/acme/apollo/issues/{number}",
        "user": {"login": "carol-acme", "id": 1},
        "labels": [{"name": n} for n in labels],
    }
    if pr:
        data["pull_request"] = {"url": f"{base}/repos/acme/apollo/pulls/{number}"}
    return data


class GitHubApi:
    """Enough of the GitHub REST API: repo, collaborators, issues and issue comments (paged)."""

    def __init__(self):
        self.base = ""
        self.fail = {}  # (path, page) -> [status, ...] answered once each, in order
        self.issues = []
        self.comments = []

    def __call__(self, request):
        path, params = request["path"], request["params"]
        page = int(params.get("page") or 1)
        queued = self.fail.get((path, page))
        if queued:
            status = queued.pop(0)
            headers = {"Retry-After": "120"} if status == 429 else {}
            return (
                status,
                headers,
                {"message": "API rate limit exceeded" if status == 429 else "server error"},
            )
        if path == "/repos/acme/apollo":
            return (
                200,
                {},
                {
                    "id": 1,
                    "full_name": "acme/apollo",
                    "private": True,
                    "url": f"{self.base}/repos/acme/apollo",
                },
            )
        if path == "/repos/acme/apollo/collaborators":
            return 200, {}, [{"login": "carol-acme", "id": 1}, {"login": "outsider", "id": 9}]
        if path == "/repos/acme/apollo/issues":
            since = params.get("since", "")
            items = sorted(
                (i for i in self.issues if i["updated_at"] >= since), key=lambda i: i["updated_at"]
            )
            return self._page(path, items, page, int(params.get("per_page", 30)), params)
        if path == "/repos/acme/apollo/issues/comments":
            return 200, {}, self.comments
        return 404, {}, {"message": "Not Found"}

    def _page(self, path, items, page, per_page, params):
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            query = "&".join(f"{k}={v}" for k, v in {**params, "page": page + 1}.items())
            headers["Link"] = f'<{self.base}{path}?{query}>; rel="next"'
        return 200, headers, chunk


@pytest.fixture
def github_api(company):
    from connectors.services.identity import identity_upsert

    identity_upsert(
        tenant=company.tenant, source_kind="github", handle="carol-acme", email="carol@acme.example"
    )
    api = GitHubApi()
    with http_server(api) as server:
        api.base = server.url
        b = server.url
        api.issues = [
            issue(b, 1, labels=["customer:Vercel", "project:Apollo"]),
            issue(b, 2, state="closed", updated="2026-11-11T10:00:00Z", closed="2026-11-11T10:00:00Z"),
            issue(b, 3, updated="2026-11-12T10:00:00Z", pr=True),
        ]
        api.comments = [
            {
                "id": 77,
                "body": "LGTM 👍",
                "user": {"login": "carol-acme"},
                "created_at": "2026-11-12T11:00:00Z",
                "updated_at": "2026-11-12T11:00:00Z",
                "issue_url": f"{b}/repos/acme/apollo/issues/3",
                "html_url": "https://github.example/acme/apollo/pull/3#issuecomment-77",
            }
        ]
        server.api = api
        yield server


def _source(tenant, server, token="ghp_test"):
    source = source_ensure(
        tenant=tenant,
        name="github",
        config={
            "repos": ["acme/apollo"],
            "base_url": server.url,
            "per_page": 2,
            "seconds_between_requests": 0,
        },
    )
    source_set_credentials(source=source, value=token)
    return source


@pytest.fixture(autouse=True)
def _fernet(settings):
    from cryptography.fernet import Fernet

    settings.CONNECTOR_SECRET_KEY = Fernet.generate_key().decode()


def test_github_poll_issues_prs_comments_and_members(company, github_api):
    source = _source(company.tenant, github_api)
    assert poll_source(source=source)["state"] == "ok"
    kinds = sorted(Event.objects.values_list("kind", flat=True))
    assert kinds == ["issue", "issue", "issue", "issue_closed", "message", "pull_request", "pull_request"]
    assert Event.objects.get(kind="issue_closed").external_id == "acme/apollo#2"
    assert Event.objects.get(kind="message").thread_key == "github:issue:acme/apollo#3"
    assert Event.objects.filter(tags={"customer": "Vercel", "project": "Apollo"}).exists()
    assert group_members(tenant=company.tenant, key="github:repo:acme/apollo") == [
        "carol"
    ]  # outsider: nothing
    auth = {r["headers"].get("Authorization") for r in github_api.requests}
    assert auth == {"token ghp_test"}
    assert "ghp_test" not in source.credentials  # stored encrypted


def second_issues_request_fails(app):
    """`app` with its second request for acme/apollo's issues answered by a 502."""
    calls = {"issues": 0}

    def serve(request):
        if request["path"] == "/repos/acme/apollo/issues":
            calls["issues"] += 1
            if calls["issues"] == 2:
                return 502, {}, {"message": "server error"}
        return app(request)

    return serve


def test_github_5xx_backs_off_exponentially_and_resumes(company, github_api):
    source = _source(company.tenant, github_api)
    # every page is read as page 1 from the last updated_at
    github_api.app = second_issues_request_fails(github_api.app)
    assert poll_source(source=source)["state"] == "backoff"
    first = SyncCursor.objects.get(source=source)
    assert first.consecutive_failures == 1 and "502" in first.last_error
    assert first.cursor["repos"]["acme/apollo"]["issues_since"] == "2026-11-11T10:00:00+00:00"  # page 1 saved
    assert Event.objects.filter(external_id="acme/apollo#2", kind="issue_closed").exists()
    github_api.api.fail[("/repos/acme/apollo/issues", 1)] = [503]
    assert poll_source(source=source, force=True)["state"] == "backoff"
    second = SyncCursor.objects.get(source=source)
    first_delay = (first.backoff_until - first.last_attempt_at).total_seconds()
    second_delay = (second.backoff_until - second.last_attempt_at).total_seconds()
    assert second.consecutive_failures == 2 and second_delay > first_delay * 1.5
    github_api.requests.clear()
    assert poll_source(source=source, force=True)["state"] == "ok"
    since = [r["params"].get("since") for r in github_api.requests if r["path"].endswith("/issues")]
    assert since[0] == "2026-11-11T10:00:00Z"  # resumed from the stored cursor
    assert Event.objects.filter(external_id="acme/apollo#3").count() == 2
    assert Event.objects.count() == 7


def test_github_429_uses_retry_after(company, github_api):
    source = _source(company.tenant, github_api)
    github_api.api.fail[("/repos/acme/apollo", 1)] = [429]
    assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert 119 <= (state.backoff_until - state.last_attempt_at).total_seconds() <= 125
    assert "429" in state.last_error


def test_github_repoll_is_idempotent_and_sees_closing(company, github_api):
    source = _source(company.tenant, github_api)
    poll_source(source=source)
    count = Event.objects.count()
    assert poll_source(source=source)["accepted"] == 0
    assert Event.objects.count() == count
    github_api.api.issues[0].update(
        state="closed", updated_at="2026-11-20T10:00:00Z", closed_at="2026-11-20T10:00:00Z"
    )
    assert poll_source(source=source)["accepted"] == 1
    assert Event.objects.filter(external_id="acme/apollo#1", kind="issue_closed").exists()


def test_import_github_live_repo(company, github_api, capsys):
    call_command(
        "import_github",
        "--repo",
        "acme/apollo",
        "--base-url",
        github_api.url,
        "--token",
        "ghp_test",
        "--no-progress",
    )
    assert "github: 7 new events" in capsys.readouterr().out


def test_import_github_reads_the_token_from_a_file(company, github_api, capsys, tmp_path):
    secret = tmp_path / "gh-token"
    secret.write_text("ghp_from_file\n")
    call_command(
        "import_github", "--repo", "acme/apollo", "--base-url", github_api.url, "--token-file", str(secret), "--no-progress"
    )  # fmt: skip
    assert "github: 7 new events" in capsys.readouterr().out
    assert {r["headers"].get("Authorization") for r in github_api.requests} == {"token ghp_from_file"}


@pytest.mark.parametrize(("content", "error"), [(None, "cannot read"), ("  \n", "is empty")])
def test_import_github_token_file_errors(company, tmp_path, content, error):
    from django.core.management import CommandError

    secret = tmp_path / "gh-token"
    if content is not None:
        secret.write_text(content)
    with pytest.raises(CommandError, match=error):
        call_command("import_github", "--repo", "acme/apollo", "--token-file", str(secret), "--no-progress")


# --- an item updated between two pages -----------------------------------------------------


class MovingGitHubApi(GitHubApi):
    """After the first page of issues is served, issue 1 is updated: it moves to the end."""

    def __init__(self):
        super().__init__()
        self.moved = False

    def __call__(self, request):
        response = super().__call__(request)
        if request["path"] == "/repos/acme/apollo/issues" and not self.moved:
            self.moved = True
            self.issues[0] = {**self.issues[0], "updated_at": "2026-11-20T10:00:00Z", "title": "moved"}
        return response


@pytest.fixture
def moving_api(company):
    api = MovingGitHubApi()
    with http_server(api) as server:
        api.base = server.url
        api.issues = [
            issue(server.url, 1),
            issue(server.url, 2, updated="2026-11-11T10:00:00Z"),
            issue(server.url, 3, updated="2026-11-12T10:00:00Z"),
        ]
        server.api = api
        yield server


def _github_source(tenant, server, per_page=2):
    source = source_ensure(
        tenant=tenant,
        name="github",
        config={
            "repos": ["acme/apollo"],
            "base_url": server.url,
            "per_page": per_page,
            "seconds_between_requests": 0,
        },
    )
    source_set_credentials(source=source, value="ghp_test")
    return source


def test_github_issue_updated_between_pages_skips_nothing(company, moving_api):
    source = _github_source(company.tenant, moving_api)
    assert poll_source(source=source)["state"] == "ok"
    numbers = {e.split("#")[1] for e in Event.objects.values_list("external_id", flat=True)}
    assert numbers == {"1", "2", "3"}
    assert Event.objects.filter(external_id="acme/apollo#1", title="moved").exists()
    pages = [r["params"].get("page") for r in moving_api.requests if r["path"].endswith("/issues")]
    assert set(pages) == {None}  # always page 1, from the last updated_at read
    cursor = SyncCursor.objects.get(source=source).cursor["repos"]["acme/apollo"]
    assert cursor["issues_since"] == "2026-11-20T10:00:00+00:00"


def test_github_more_issues_at_one_updated_at_than_a_page_ends(company, moving_api):
    api = moving_api.api
    api.moved = True  # nothing moves
    same = "2026-11-15T10:00:00Z"
    api.issues = [issue(moving_api.url, n, updated=same) for n in range(1, 6)]
    source = _github_source(company.tenant, moving_api)
    assert poll_source(source=source)["state"] == "ok"
    assert Event.objects.filter(kind="issue").values("external_id").distinct().count() == 5
    assert len([r for r in moving_api.requests if r["path"].endswith("/issues")]) < 10


def test_github_5xx_mid_way_resumes_from_the_saved_mark(company, moving_api):
    api = moving_api.api
    api.moved = True
    moving_api.app = second_issues_request_fails(api.__call__)
    source = _github_source(company.tenant, moving_api)
    assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert state.cursor["repos"]["acme/apollo"]["issues_since"] == "2026-11-11T10:00:00+00:00"
    moving_api.requests.clear()
    assert poll_source(source=source, force=True)["state"] == "ok"
    assert moving_api.requests[2]["params"]["since"] == "2026-11-11T10:00:00Z"
    assert Event.objects.filter(external_id="acme/apollo#3").exists()
