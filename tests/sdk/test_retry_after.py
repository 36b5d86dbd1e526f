"""How long the client waits on a 429/503: the server's `Retry-After` (seconds or an HTTP
date), bounded. A scripted transport stands in for the server only here, where the
timing itself is what is tested; every other behaviour is tested against the live server."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest
from almanac_client import AlmanacError, Client, RateLimited, Unavailable, retry_after_seconds


def scripted(*answers: tuple[int, dict]):
    queue = list(answers)
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        status, headers = queue.pop(0)
        body = {"username": "alice"} if status == 200 else {"detail": f"status {status}"}
        return httpx.Response(status, json=body, headers=headers)

    return httpx.MockTransport(handle), seen


def client_over(transport, **kwargs):
    slept: list[float] = []
    return Client(
        "http://almanac.test", "k", user="alice", transport=transport, sleep=slept.append, **kwargs
    ), slept


def test_retry_after_in_seconds_and_as_an_http_date():
    assert retry_after_seconds("7") == 7.0 and retry_after_seconds("0.5") == 0.5
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= retry_after_seconds(date, now=now) <= 30
    assert retry_after_seconds(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None


def test_429_then_503_are_waited_out_as_the_server_says():
    date = email.utils.formatdate(time.time() + 3, usegmt=True)
    transport, seen = scripted((429, {"Retry-After": "2"}), (503, {"Retry-After": date}), (200, {}))
    client, slept = client_over(transport)
    assert client.me()["username"] == "alice"
    assert seen == ["/api/v1/me"] * 3 and slept[0] == 2 and 1 < slept[1] <= 3


def test_a_wait_beyond_the_bound_is_not_slept():
    transport, seen = scripted((429, {"Retry-After": "3600"}))
    client, slept = client_over(transport, retry_after_max=60)
    with pytest.raises(RateLimited) as error:
        client.me()
    assert slept == [] and error.value.retry_after == 3600 and len(seen) == 1


def test_retries_are_bounded_and_other_errors_are_not_retried():
    transport, seen = scripted(*[(503, {})] * 3)
    client, slept = client_over(transport, max_retries=2, backoff=0.1)
    with pytest.raises(Unavailable):
        client.me()
    assert slept == [0.1, 0.2] and len(seen) == 3
    transport, seen = scripted((500, {}), (200, {}))
    client, slept = client_over(transport)
    with pytest.raises(AlmanacError) as error:
        client.me()
    assert error.value.status == 500 and slept == [] and len(seen) == 1
