"""Webhook receivers (filled in below)."""

from almanac.errors import ApplicationError


def slack_handle(request):
    raise ApplicationError("not configured", status_code=503)


def github_handle(request):
    raise ApplicationError("not configured", status_code=503)
