"""The benchmark generator makes events the inbox accepts and the compiler compiles."""

from collections import Counter

from bench.wiki.generate import ensure_users, generate, ingest
from connectors.models import Event
from wiki.models import PageSection
from wiki.services.backlog import compile_pending


def test_generated_events_ingest_and_compile(tenant):
    ensure_users(tenant)
    payloads = generate(tenant, 50, seed=3)
    assert generate(tenant, 50, seed=3) == payloads  # deterministic
    ingest(tenant, payloads)
    assert Event.objects.filter(tenant=tenant).count() == 50
    assert compile_pending(tenant=tenant) == 50
    assert PageSection.objects.filter(tenant=tenant, acl__overlap=[tenant.group_key]).exists()
    assert PageSection.objects.filter(tenant=tenant).exclude(acl__overlap=[tenant.group_key]).exists()
    assert len(Counter(p["kind"] for p in payloads)) >= 5
