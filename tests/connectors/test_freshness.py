"""Freshness that means something: a source is lagging only when it was expected to deliver
(a poller behind its schedule, in backoff or failing), never merely quiet; webhook-only
sources never poll; agents get a short reason, operators the error."""

from datetime import timedelta

import pytest
from django.utils import timezone

from connectors.models import Source, SyncCursor
from connectors.selectors import failure_reason, source_freshness
from connectors.services.ingest import event_ingest
from connectors.services.poller import is_pollable
from connectors.services.sources import source_ensure, sync_failure
from context.services import freshness_warnings
from tests.connectors.conftest import make_event

pytestmark = pytest.mark.django_db
LONG_AGO = timedelta(days=3)


def _age(source, delta):
    Source.objects.filter(pk=source.pk).update(created_at=timezone.now() - delta)


def test_a_quiet_webhook_source_is_not_lagging(tenant, alice):
    event_ingest(tenant=tenant, payload=make_event(source="github", container={"key": "github:repo:acme/x"}))
    source = Source.objects.get(name="github")
    source.config = {"repos": ["acme/x"]}  # repos to match webhook deliveries, no token
    source.save(update_fields=["config"])
    _age(source, LONG_AGO)
    from connectors.models import Event

    Event.objects.update(received_at=timezone.now() - LONG_AGO)
    state = source_freshness(tenant=tenant)["github"]
    assert state["mode"] == "push" and not state["stale"] and state["lag_seconds"] > 3600
    assert freshness_warnings(source_freshness(tenant=tenant)) == []


def test_an_import_fed_source_that_never_polled_is_not_lagging(tenant):
    source = source_ensure(tenant=tenant, name="notes")  # filled by import_notes only
    _age(source, LONG_AGO)
    assert not source_freshness(tenant=tenant)["notes"]["stale"]


def test_a_webhook_only_github_source_is_never_polled(tenant):
    webhook = source_ensure(tenant=tenant, name="github", config={"repos": ["acme/x"]})
    assert not is_pollable(webhook)
    with_token = source_ensure(tenant=tenant, name="gh2", config={"repos": ["acme/x"]})
    Source.objects.filter(pk=with_token.pk).update(kind="github", credentials="env:GH_TOKEN")
    with_token.refresh_from_db()
    assert is_pollable(with_token)
    public = source_ensure(tenant=tenant, name="gh3", config={"repos": ["acme/x"], "poll": True})
    Source.objects.filter(pk=public.pk).update(kind="github")
    public.refresh_from_db()
    assert is_pollable(public)
    with_token.config = {"repos": ["acme/x"], "poll": False}
    assert not is_pollable(with_token)


def test_a_poller_in_backoff_is_lagging_with_a_short_reason(tenant):
    source = source_ensure(tenant=tenant, name="slack")
    Source.objects.filter(pk=source.pk).update(credentials="env:SLACK_TOKEN")
    error = "ConnectError: [Errno -2] Name or service not known: slack.internal.acme:8443 token=xoxb-1"
    sync_failure(source=Source.objects.get(pk=source.pk), error=error)
    state = source_freshness(tenant=tenant)["slack"]
    assert state["stale"] and state["state"] == "backoff" and state["reason"] == "cannot reach the service"
    assert state["last_error"] == error  # operators read the whole error
    (warning,) = freshness_warnings({"slack": {k: v for k, v in state.items() if k != "last_error"}})
    assert warning["detail"].endswith("slack (backoff: cannot reach the service)")
    assert "xoxb" not in warning["detail"] and "acme" not in warning["detail"]


def test_a_poller_behind_its_schedule_is_lagging(tenant, settings):
    settings.SOURCE_LAG_WARNING_SECONDS = 600
    source = source_ensure(tenant=tenant, name="notes", config={"folder": "/tmp/notes"})
    SyncCursor.objects.create(source=source, last_success_at=timezone.now() - timedelta(minutes=5))
    assert not source_freshness(tenant=tenant)["notes"]["stale"]  # within 5 min + 10 min
    SyncCursor.objects.filter(source=source).update(last_success_at=timezone.now() - timedelta(hours=1))
    state = source_freshness(tenant=tenant)["notes"]
    assert state["mode"] == "poll" and state["stale"] and state["reason"] == "behind its polling schedule"


def test_raw_exception_text_never_reaches_the_context_response(api, tenant, alice, settings):
    settings.CONTEXT_FRESHNESS_CACHE_SECONDS = 0
    source = source_ensure(tenant=tenant, name="email", config={"host": "imap.acme.internal"})
    sync_failure(source=source, error="IMAP4.error: b'[AUTHENTICATIONFAILED] user ceo@acme.com'")
    body = api.post(
        "/context", {"user": "alice", "task": "anything at all", "max_tokens": 500}
    ).content.decode()
    assert "AUTHENTICATIONFAILED" not in body and "ceo@acme.com" not in body and "imap.acme" not in body
    assert "authentication failed" in body
    rows = api.get("/connectors").json()
    assert rows[0]["last_error"].startswith("IMAP4.error") and rows[0]["reason"] == "authentication failed"


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        ("HTTP 429 Too Many Requests", "rate limited by the service"),
        ("slack: HTTP 401 invalid_auth", "authentication failed"),
        ("github: HTTP 502", "the service answered with an error"),
        ("ReadTimeout: timed out", "cannot reach the service"),
        ("ValueError: bad feed", "sync failed"),
    ],
)
def test_failure_reasons(error, reason):
    assert failure_reason(error) == reason
