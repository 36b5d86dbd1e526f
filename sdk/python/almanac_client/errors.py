"""Exceptions carrying the API's status and `detail` (docs/api.md, Errors)."""

from __future__ import annotations

from typing import Any


class AlmanacError(Exception):
    """An error answer of the API: `status` is the HTTP status, `detail` the body's `detail`
    (a string, or for a validation 422 the list of field errors), `body` the whole JSON body
    (some errors add fields: `index` of a refused event, `field` of a skill's input)."""

    def __init__(self, status: int, detail: Any, body: dict | None = None):
        self.status = status
        self.detail = detail
        self.body = body or {}
        super().__init__(f"{status}: {detail}")


class BadRequest(AlmanacError):
    """400: malformed request, or a foreign, tampered or expired context cursor."""


class Unauthorized(AlmanacError):
    """401: unknown, revoked or missing agent key."""


class Forbidden(AlmanacError):
    """403: the key or the user may not do this."""


class NotFound(AlmanacError):
    """404: not found, or not visible to the acting user (a user of another tenant too)."""


class Conflict(AlmanacError):
    """409: conflicts with the current state (a turn on an ended session, ...)."""


class Invalid(AlmanacError):
    """422: a field or parameter missing, malformed or out of range."""


class RateLimited(AlmanacError):
    """429 after the client's retries; `retry_after` is the server's last `Retry-After`."""

    def __init__(self, status: int, detail: Any, body: dict | None = None, retry_after: float | None = None):
        super().__init__(status, detail, body)
        self.retry_after = retry_after


class Unavailable(AlmanacError):
    """503 after the client's retries: a service the call needs is down."""


BY_STATUS: dict[int, type[AlmanacError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: Invalid,
    429: RateLimited,
    503: Unavailable,
}
