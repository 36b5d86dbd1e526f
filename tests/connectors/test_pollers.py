"""`connectors.services.poller.poll_source`: backoff after a failure (Retry-After or exponential)
and credentials that cannot be resolved."""

from datetime import UTC, datetime, timedelta

import pytest

from connectors.models import Source, SyncCursor
from connectors.services.poller import poll_source
from tests.connectors.servers import http_server
from tests.connectors.test_calendar_poller import calendar_source

pytestmark = pytest.mark.django_db


# --- Retry-After that is no number of seconds ----------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-5", "soon"])
def test_unusable_retry_after_backs_off_exponentially(company, value, settings):
    with http_server(lambda request: (429, {"Retry-After": value}, {"error": "slow down"})) as server:
        source = calendar_source(company.tenant, server.url + "/team.ics")
        assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    delay = (state.backoff_until - state.last_attempt_at).total_seconds()
    assert state.consecutive_failures == 1 and abs(delay - settings.CONNECTOR_BACKOFF_BASE_SECONDS) < 5


def test_huge_retry_after_is_capped(company, settings):
    with http_server(lambda request: (429, {"Retry-After": "1e300"}, {"error": "slow down"})) as server:
        source = calendar_source(company.tenant, server.url + "/team.ics")
        assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert (
        abs(
            (state.backoff_until - state.last_attempt_at).total_seconds()
            - settings.CONNECTOR_BACKOFF_MAX_SECONDS
        )
        < 5
    )


def test_retry_after_as_an_http_date(company):
    when = datetime.now(UTC) + timedelta(seconds=300)
    header = when.strftime("%a, %d %b %Y %H:%M:%S GMT")
    with http_server(lambda request: (429, {"Retry-After": header}, {"error": "slow down"})) as server:
        source = calendar_source(company.tenant, server.url + "/team.ics")
        assert poll_source(source=source)["state"] == "backoff"
    state = SyncCursor.objects.get(source=source)
    assert 290 <= (state.backoff_until - state.last_attempt_at).total_seconds() <= 310


# --- credentials ---------------------------------------------------------------------------


def test_credentials_naming_an_unset_environment_variable_fail_the_poll(company, monkeypatch):
    monkeypatch.delenv("ALMANAC_TEST_CAL_TOKEN", raising=False)
    requests = []
    with http_server(lambda request: requests.append(request) or (200, {}, b"")) as server:
        source = calendar_source(company.tenant, server.url + "/basic.ics")
        Source.objects.filter(pk=source.pk).update(credentials="env:ALMANAC_TEST_CAL_TOKEN")
        source.refresh_from_db()
        assert poll_source(source=source)["state"] == "backoff"
    assert "ALMANAC_TEST_CAL_TOKEN, which is not set" in SyncCursor.objects.get(source=source).last_error
    assert requests == []  # never polled without the credentials it was given
