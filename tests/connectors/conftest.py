import pytest


@pytest.fixture
def push(client, connector_key):
    """POST to /connectors/events with the connector key."""

    def _push(body, key=None):
        return client.post(
            "/api/v1/connectors/events",
            body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {key or connector_key}"},
        )

    return _push


def make_event(**over):
    event = {
        "source": "slack",
        "external_id": "C123/1700000000.000100",
        "version": 1,
        "kind": "message",
        "occurred_at": "2026-11-30T10:00:00Z",
        "container": {
            "key": "slack:channel:C123",
            "name": "#finance-internal",
            "members": ["alice@acme.com", "bob@acme.com"],
            "public": False,
        },
        "thread_key": "slack:thread:C123/1700000000.000100",
        "author": "bob@acme.com",
        "title": "",
        "text": "Q4 预算 for Vercel is approved",
        "tags": {"customer": "Vercel", "project": "Apollo"},
        "url": "",
    }
    event.update(over)
    return event


DEMO = __import__("pathlib").Path(__file__).resolve().parents[2] / "connectors" / "demo_data"


@pytest.fixture
def company(db):
    """The demo company (tenant acme, users alice, bob, carol, wangwei, dave with @acme.example)."""
    from almanac.demo import load_company

    return load_company()


@pytest.fixture
def slack_zip(tmp_path):
    """A standard Slack export zip built from the demo export folder."""
    import zipfile

    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted((DEMO / "slack").rglob("*.json")):
            archive.write(file, file.relative_to(DEMO / "slack").as_posix())
    return path


@pytest.fixture
def slack_api():
    """A local Slack Web API over real HTTP; `slack_api.api` is what it serves."""
    from tests.connectors.servers import http_server
    from tests.connectors.test_slack_poller import SlackApi

    api = SlackApi()
    with http_server(api) as server:
        server.api = api
        yield server
