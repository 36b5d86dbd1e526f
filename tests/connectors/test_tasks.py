from datetime import timedelta
from unittest import mock

import pytest
from cryptography.fernet import Fernet
from django.utils import timezone

from almanac.errors import ApplicationError
from connectors import tasks
from connectors.crypto import credentials_decode, credentials_encode
from connectors.models import Event, SyncCursor
from connectors.selectors import source_freshness
from connectors.services.sources import source_ensure, sync_failure
from tests.connectors.conftest import DEMO
from tests.connectors.servers import http_server

pytestmark = pytest.mark.django_db

ICS = (DEMO / "calendar.ics").read_bytes()


class Feed:
    def __init__(self):
        self.statuses = []  # answered once each before the feed itself

    def __call__(self, request):
        if self.statuses:
            status = self.statuses.pop(0)
            return status, {"Retry-After": "90"} if status == 429 else {}, {"error": status}
        if request["headers"].get("If-None-Match") == '"v1"':
            return 304, {}, b""
        return 200, {"ETag": '"v1"', "Content-Type": "text/calendar"}, ICS


@pytest.fixture
def feed():
    app = Feed()
    with http_server(app) as server:
        server.feed = app
        yield server


def _calendar_source(tenant, url):
    return source_ensure(tenant=tenant, name="calendar", config={"url": url + "/team.ics"})


def test_ics_feed_poll_then_304(company, feed):
    source = _calendar_source(company.tenant, feed.url)
    assert tasks.source_poll_task(source.id)["accepted"] == 4
    assert tasks.source_poll_task(source.id) == {"accepted": 0, "duplicates": 0, "state": "ok"}
    assert feed.requests[-1]["headers"]["If-None-Match"] == '"v1"'
    assert source_freshness(tenant=company.tenant)["calendar"]["state"] == "ok"


def test_ics_feed_429_and_5xx_back_off(company, feed):
    source = _calendar_source(company.tenant, feed.url)
    feed.feed.statuses = [429, 500]
    assert tasks.source_poll_task(source.id)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert 89 <= (state.backoff_until - state.last_attempt_at).total_seconds() <= 95
    assert tasks.source_poll_task(source.id)["state"] == "backoff"  # in backoff: not even tried
    assert len(feed.requests) == 1
    assert tasks.source_poll_task(source.id, force=True)["state"] == "backoff"
    assert "HTTP 500" in SyncCursor.objects.get(source=source).last_error
    assert source_freshness(tenant=company.tenant)["calendar"]["state"] == "backoff"
    assert tasks.source_poll_task(source.id, force=True)["accepted"] == 4
    assert source_freshness(tenant=company.tenant)["calendar"]["state"] == "ok"


def test_poll_due_sources_skips_backoff_and_recent(company, feed):
    due = _calendar_source(company.tenant, feed.url)
    backing_off = source_ensure(tenant=company.tenant, name="github", config={"repos": ["acme/x"]})
    sync_failure(source=backing_off, error="HTTP 429", retry_after=600)
    source_ensure(tenant=company.tenant, name="hubspot")  # push-only: never polled
    with mock.patch("connectors.tasks.async_task") as enqueue:
        assert tasks.poll_due_sources() == 1
        enqueue.assert_called_once_with("connectors.tasks.source_poll_task", due.id)
        assert tasks.poll_due_sources() == 0  # claimed a moment ago: not due yet
    SyncCursor.objects.filter(source=due).update(
        last_attempt_at=timezone.now() - timedelta(minutes=due.poll_minutes + 1)
    )
    with mock.patch("connectors.tasks.async_task") as enqueue:
        assert tasks.poll_due_sources() == 1


def test_poll_due_sources_runs_the_poll(company, feed):
    _calendar_source(company.tenant, feed.url)
    tasks.poll_due_sources()  # django-q runs the enqueued poll inline in tests
    assert Event.objects.filter(source__name="calendar").count() == 4


def test_source_poll_task_ignores_missing_or_disabled(company, feed):
    source = _calendar_source(company.tenant, feed.url)
    source.enabled = False
    source.save(update_fields=["enabled"])
    assert tasks.source_poll_task(source.id) is None
    assert tasks.source_poll_task(999999) is None
    assert feed.requests == []


def test_schedules_declare_the_scheduler():
    assert tasks.SCHEDULES == [
        {"name": "connectors.poll_due_sources", "func": "connectors.tasks.poll_due_sources", "minutes": 1}
    ]


def test_credentials_encrypted_or_env(settings, monkeypatch):
    settings.CONNECTOR_SECRET_KEY = Fernet.generate_key().decode()
    stored = credentials_encode("xoxb-secret-token")
    assert "xoxb" not in stored and credentials_decode(stored) == "xoxb-secret-token"
    assert credentials_decode(credentials_encode({"username": "u", "password": "密码"})) == {
        "username": "u",
        "password": "密码",
    }
    monkeypatch.setenv("MY_TOKEN", "from-env")
    assert credentials_encode("env:MY_TOKEN") == "env:MY_TOKEN"
    assert credentials_decode("env:MY_TOKEN") == "from-env"
    settings.CONNECTOR_SECRET_KEY = Fernet.generate_key().decode()
    with pytest.raises(ApplicationError, match="cannot be decrypted"):
        credentials_decode(stored)
    settings.CONNECTOR_SECRET_KEY = ""
    with pytest.raises(ApplicationError, match="CONNECTOR_SECRET_KEY is not set"):
        credentials_encode("x")


def test_webhook_only_slack_source_is_not_polled(company):
    source_ensure(tenant=company.tenant, name="slack", config={"team_id": "T1"})
    with mock.patch("connectors.tasks.async_task") as enqueue:
        assert tasks.poll_due_sources() == 0
    enqueue.assert_not_called()


def test_setup_schedules_rewrites_a_schedule_stored_under_an_old_function_path():
    """A database made before a module moved keeps its schedule rows: `setup_schedules` (run
    by `manage.py up`) finds them by name and points them at the function's path now."""
    from django_q.models import Schedule

    from almanac.schedules import setup_schedules

    Schedule.objects.filter(
        name="connectors.poll_due_sources"
    ).delete()  # a row an earlier setup_schedules left
    Schedule.objects.create(
        name="connectors.poll_due_sources", func="connectors.pollers.poll_due_sources", minutes=5
    )
    setup_schedules()
    schedule = Schedule.objects.get(name="connectors.poll_due_sources")
    assert (schedule.func, schedule.minutes) == ("connectors.tasks.poll_due_sources", 1)
    assert Schedule.objects.filter(func__startswith="connectors.").count() == 1
