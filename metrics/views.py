"""`GET /metrics` in the Prometheus text format (docs/operations.md, "Metrics")."""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from metrics.exposition import FigureCollector
from metrics.instruments import multiprocess_dir


def _loopback(request) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False  # a unix socket's peer has no address: behind a proxy, set METRICS_TOKEN


def refusal(request) -> JsonResponse | None:
    """None when the scrape may read; else the JSON 401. With METRICS_TOKEN set, only
    `Authorization: Bearer <token>` (compared in constant time); without, loopback only."""
    token = settings.METRICS_TOKEN
    if not token:
        if _loopback(request):
            return None
        detail = "metrics answer loopback only while METRICS_TOKEN is unset"
    else:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return None
        detail = "a valid bearer token is required"
    response = JsonResponse({"detail": detail}, status=401)
    response["WWW-Authenticate"] = "Bearer"
    return response


def metrics_view(request):
    if request.method not in ("GET", "HEAD"):
        return JsonResponse({"detail": "only GET"}, status=405, headers={"Allow": "GET, HEAD"})
    refused = refusal(request)
    if refused is not None:
        return refused
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=multiprocess_dir())
    registry.register(FigureCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
