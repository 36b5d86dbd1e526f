"""Nothing leaks through MCP while memberships change: after each random grant or revocation,
every user reads through `/mcp` (wiki_page, wiki_search, context), at the handshake revision
and the per-request one in turn, exactly the private sections of the channels they belong to now, checked against the memberships themselves
(docs/agents.md, MCP; the one access filter)."""

from __future__ import annotations

import json
import re

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from almanac.models import GroupMembership
from almanac.selectors import group_get
from almanac.services.tenancy import membership_add, membership_remove
from tests.context.conftest import push
from tests.context.test_mcp import Mcp
from tests.context.test_mcp_modern import Modern

CHANNELS = 4
USERS = ("alice", "bob", "charlie")
MARK = re.compile(r"ORBIT-MARK-(\d)")


@pytest.fixture
def orbit(tenant, alice, bob, charlie):
    """A customer page with one section per private channel, each naming its own marker."""
    for k in range(CHANNELS):
        container = {"key": f"slack:channel:CORB{k}", "name": f"#orbit-{k}", "public": False}
        push(
            tenant,
            compile=False,
            container={**container, "members": [f"{USERS[k % 3]}@acme.com"]},
            tags={"customer": "Orbit"},
            text=f"Orbit renewal note ORBIT-MARK-{k}: the Orbit contract terms, channel {k}.",
        )
    push(
        tenant,
        container={"key": "slack:channel:CPUB", "name": "#general", "public": True},
        tags={"customer": "Orbit"},
        text="Orbit is our customer for the renewal.",
    )
    return {"alice": alice, "bob": bob, "charlie": charlie}


def _allowed(tenant, user) -> set[str]:
    keys = GroupMembership.objects.filter(user=user, group__tenant=tenant).values_list(
        "group__key", flat=True
    )
    return {key.removeprefix("slack:channel:CORB") for key in keys if key.startswith("slack:channel:CORB")}


def _seen(mcp: Mcp | Modern, name: str) -> set[str]:
    texts = [
        json.dumps(mcp.call("wiki_page", user=name, slug="orbit"), ensure_ascii=False),
        json.dumps(
            mcp.call("wiki_search", user=name, query="Orbit renewal contract terms"), ensure_ascii=False
        ),
        json.dumps(
            mcp.call("context", user=name, task="Orbit contract terms", max_tokens=3000), ensure_ascii=False
        ),
    ]
    return {m for text in texts for m in MARK.findall(text)}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(st.tuples(st.sampled_from(USERS), st.integers(0, CHANNELS - 1), st.booleans()), max_size=6)
)
def test_random_grants_and_revocations_never_leak_through_mcp(client, agent_key, tenant, orbit, steps):
    revisions = (Mcp(client, agent_key), Modern(client, agent_key))
    with transaction.atomic():
        for mcp in revisions:
            first = {reader: _seen(mcp, reader) for reader in orbit}
            assert first == {"alice": {"0", "3"}, "bob": {"1"}, "charlie": {"2"}}
        for step, (name, k, grant) in enumerate(steps):
            mcp = revisions[step % 2]
            group = group_get(tenant=tenant, key=f"slack:channel:CORB{k}")
            if grant:
                membership_add(user=orbit[name], group=group, origin="admin")
            else:
                membership_remove(user=orbit[name], group=group)
            for reader, user in orbit.items():
                seen, allowed = _seen(mcp, reader), _allowed(tenant, user)
                assert seen <= allowed, (reader, seen, allowed)  # never a leak
                assert seen == allowed, (reader, seen, allowed)  # and nothing lost
        transaction.set_rollback(True)
