"""Connector endpoints: the push endpoint, source states, and the Slack/GitHub webhooks."""

from __future__ import annotations

from django.http import Http404
from ninja import Router
from ninja.responses import Status

from almanac import jsonbody
from almanac.auth import request_tenant, require_connector_key
from connectors import selectors
from connectors.github import webhook as github
from connectors.schemas import ConnectorSourceOut, IngestOut
from connectors.services.ingest import event_ingest_batch
from connectors.slack import webhook as slack

router = Router(tags=["connectors"])


@router.post(
    "/events",
    response={202: IngestOut},
    openapi_extra={"requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}},
)
def push_events(request):
    """One normalized event, or {"events": [...]} (docs/api.md, Connectors)."""
    key = require_connector_key(request)
    body = jsonbody.loads(request.body)
    payloads = body["events"] if isinstance(body, dict) and set(body) == {"events"} else [body]
    return Status(202, event_ingest_batch(tenant=key.tenant, payloads=payloads))


@router.get("", response=list[ConnectorSourceOut])
def list_sources(request):
    tenant = request_tenant(request)
    if tenant is None:
        raise Http404("tenant not found")
    return selectors.source_rows(tenant=tenant)


@router.post("/slack/events", auth=None)
def slack_events(request):
    """Slack Events API: signed requests only (SLACK_SIGNING_SECRET)."""
    return slack.handle(request)


@router.post("/github/webhook", auth=None)
def github_webhook(request):
    """GitHub webhooks: X-Hub-Signature-256 with GITHUB_WEBHOOK_SECRET."""
    return github.handle(request)
