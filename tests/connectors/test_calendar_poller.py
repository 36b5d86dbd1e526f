"""The calendar (ICS feed) poller: a feed's secret URL stays out of errors and logs, and
recurring events keep arriving while the feed is unchanged."""

import logging
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest

from almanac.services.keys import agentkey_create
from connectors.models import Event, SyncCursor
from connectors.services.poller import poll_source
from connectors.services.sources import source_ensure
from tests.connectors.servers import http_server

pytestmark = pytest.mark.django_db


# --- the feed's secret URL -----------------------------------------------------------------


SECRET_PATH = "/calendar/ical/alice%40acme.example/private-5ecret7oken/basic.ics"


def calendar_source(tenant, url):
    return source_ensure(tenant=tenant, name="calendar", config={"url": url})


def test_calendar_errors_and_logs_never_show_the_feed_url(company, client, caplog):
    caplog.set_level(logging.INFO)
    with http_server(lambda request: (404, {}, {"error": "gone"})) as server:
        host = server.url.removeprefix("http://")
        source = calendar_source(company.tenant, f"http://user:pa55@{host}{SECRET_PATH}?key=5ecret")
        assert poll_source(source=source)["state"] == "backoff"
    assert SyncCursor.objects.get(source=source).last_error == f"calendar http://{host}: HTTP 404"
    key = agentkey_create(tenant=company.tenant, name="reader")[1]
    listing = client.get("/api/v1/connectors", headers={"Authorization": f"Bearer {key}"}).content.decode()
    assert "HTTP 404" in listing
    for secret in ("5ecret", "pa55", "basic.ics", "alice%40"):
        assert secret not in listing and secret not in caplog.text


def test_calendar_connection_error_does_not_show_the_url(company, caplog):
    with http_server(lambda request: (200, {}, b"")) as server:
        url = f"{server.url}{SECRET_PATH}"
    # the server is gone: connection refused
    source = calendar_source(company.tenant, url)
    assert poll_source(source=source)["state"] == "backoff"
    error = SyncCursor.objects.get(source=source).last_error
    assert error.startswith("calendar http://127.0.0.1:") and "5ecret" not in error
    assert "5ecret" not in caplog.text


def test_calendar_invalid_feed_error_does_not_quote_it(company):
    with http_server(
        lambda request: (200, {}, b"BEGIN:VCALENDAR\r\nSUMMARY private merger talk\r\n")
    ) as server:
        source = calendar_source(company.tenant, server.url + SECRET_PATH)
        assert poll_source(source=source)["state"] == "backoff"
    error = SyncCursor.objects.get(source=source).last_error
    assert "not a valid ICS feed" in error and "merger" not in error and "5ecret" not in error


# --- recurring events while the feed is unchanged ------------------------------------------


WEEKLY = b"""BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Acme//test//EN\r
BEGIN:VEVENT\r
UID:weekly-sync@acme.example\r
DTSTAMP:20260101T000000Z\r
DTSTART:20260105T090000Z\r
DTEND:20260105T093000Z\r
RRULE:FREQ=WEEKLY\r
SUMMARY:Weekly Apollo sync\r
ORGANIZER:mailto:alice@acme.example\r
END:VEVENT\r
END:VCALENDAR\r
"""


def _etag_feed(request):
    if request["headers"].get("If-None-Match") == '"w1"':
        return 304, {}, b""
    return 200, {"ETag": '"w1"', "Content-Type": "text/calendar"}, WEEKLY


def test_recurring_events_keep_arriving_while_the_feed_is_unchanged(company):
    start = datetime(2026, 6, 1, tzinfo=UTC)
    with http_server(_etag_feed) as server:
        source = calendar_source(company.tenant, server.url + "/team.ics")
        with mock.patch("django.utils.timezone.now", return_value=start):
            first = poll_source(source=source)["accepted"]
        with mock.patch("django.utils.timezone.now", return_value=start + timedelta(hours=2)):
            assert poll_source(source=source, force=True)["accepted"] == 0
        assert server.requests[-1]["headers"].get("If-None-Match") == '"w1"'  # the cheap 304 path
        with mock.patch("django.utils.timezone.now", return_value=start + timedelta(days=8)):
            later = poll_source(source=source, force=True)
        assert "If-None-Match" not in server.requests[-1]["headers"]
    assert first > 10 and later["state"] == "ok" and later["accepted"] >= 1
    newest = Event.objects.filter(external_id__startswith="weekly-sync").order_by("-occurred_at").first()
    assert newest.occurred_at > start + timedelta(days=60)
