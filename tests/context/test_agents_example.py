"""docs/agents_example.py runs as written: the real httpx client against the Django app.

The client talks WSGI in-process (httpx.WSGITransport) rather than over a socket, so the
example sees this test's data inside its transaction.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import httpx
import pytest
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "agents_example.py"


def load_example():
    spec = importlib.util.spec_from_file_location("agents_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def keep_test_connection():
    """As django.test.Client does: the test's transaction must survive each request."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def test_the_agent_example_runs_end_to_end(capsys, tenant, alice, agent_key, keep_test_connection):
    from memories.models import Memory
    from tests.context.conftest import SALES, push

    push(
        tenant,
        container=SALES,
        tags={"customer": "Vercel"},
        text="Vercel renewal is due 2026-12-15 at ¥120,000.",
    )
    example = load_example()
    transport = httpx.WSGITransport(app=get_wsgi_application())
    headers = {"Authorization": f"Bearer {agent_key}"}
    with httpx.Client(transport=transport, base_url="http://testserver/api/v1", headers=headers) as api:
        example.run(api, "为 Vercel 起草续约提案")
    out = capsys.readouterr().out
    assert "[公司知识]\n## Vercel" in out and "¥120,000" in out
    assert "[当前会话]\n用户: 为 Vercel 起草续约提案" in out
    assert Memory.objects.filter(owner=alice, content__contains="lead with pricing").exists()
