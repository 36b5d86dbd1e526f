"""The SDK against the live test server: Django served on a real socket (pytest-django's
`live_server`), so every test commits its data (`transactional_db`) and the client talks
HTTP exactly as an outside agent does."""

from __future__ import annotations

import pytest
from almanac_client import Client

from tests.context.conftest import SALES, push


@pytest.fixture
def sdk(transactional_db, live_server, agent_key):
    """A client acting for alice by default; waits between retries are recorded, not slept."""
    slept: list[float] = []
    with Client(live_server.url, agent_key, user="alice", sleep=slept.append) as client:
        client.slept = slept
        yield client


@pytest.fixture
def vercel(sdk, tenant, alice):
    """A Vercel page and more memories than one pass holds, so there is a second pass."""
    push(
        tenant,
        container=SALES,
        tags={"customer": "Vercel"},
        text="Vercel renewal is due 2026-12-15 at ¥120,000.",
    )
    for n in range(12):
        sdk.memory_create(
            f"Vercel renewal note {n}: the champion asked for {n + 2} more seats in region {n}."
        )
