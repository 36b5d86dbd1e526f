"""The SDK against the live test server: Django served on a real socket (pytest-django's
`live_server`), so every test commits its data (`transactional_db`) and the client talks
HTTP exactly as an outside agent does."""

from __future__ import annotations

import pytest
from almanac_client import Client


@pytest.fixture
def sdk(transactional_db, live_server, agent_key):
    """A client acting for alice by default; waits between retries are recorded, not slept."""
    slept: list[float] = []
    with Client(live_server.url, agent_key, user="alice", sleep=slept.append) as client:
        client.slept = slept
        yield client
