"""A small client for the Almanac agent API (docs/api.md) and a reference agent loop."""

from .client import Client, retry_after_seconds
from .errors import (
    AlmanacError,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
)

__all__ = [
    "AlmanacError",
    "BadRequest",
    "Client",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "RateLimited",
    "Unauthorized",
    "Unavailable",
    "retry_after_seconds",
]
