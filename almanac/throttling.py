"""Per-caller rate limits for the agent API (docs/api.md, Limits: a 429 with `Retry-After`).

A fixed window per caller: an agent key (its own `rate_limit`, else `API_RATE_LIMIT`), or a
logged-in user calling the API from the web. Counted in Django's cache with `add` and
`incr`, which are atomic in the per-process cache and in Redis: with `REDIS_URL` set the
limit holds across processes and hosts, without it each web process counts for itself
(N processes let through up to N times the rate). ninja's own throttles keep each
caller's request history in the shared throttle object, which is not safe with threads.
"""

from __future__ import annotations

import logging
import re
import threading
import time

from django.conf import settings
from django.core.cache import cache
from ninja.throttling import BaseThrottle

log = logging.getLogger(__name__)
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*(s|sec|m|min|h|hour|d|day)?\s*$")
_UNIT = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


def rate_parse(rate: str) -> tuple[int, int] | None:
    """ "600/m" → (600, 60); "100/5m" → (100, 300); "0" or "" → None (no limit).
    ValueError for anything else."""
    rate = (rate or "").strip().lower()
    if rate in ("", "0", "off", "none"):
        return None
    match = _RATE.match(rate)
    if match is None:
        raise ValueError(f"a rate is requests/period, e.g. 600/m or 100/5s, not {rate!r}")
    count, multiple, unit = int(match[1]), int(match[2] or 1), match[3] or "s"
    if count == 0:
        return None
    if multiple == 0:
        raise ValueError(f"the period of {rate!r} is zero")
    return count, multiple * _UNIT[unit]


class CallerRateThrottle(BaseThrottle):
    def __init__(self):
        self._local = threading.local()  # the wait of this thread's last refused request

    def _limit(self, request) -> tuple[str, tuple[int, int] | None]:
        key = getattr(request, "agent_key", None)
        if key is not None:
            try:
                return f"key:{key.pk}", rate_parse(key.rate_limit or settings.API_RATE_LIMIT)
            except ValueError:  # written around the validators (a raw UPDATE): the default holds
                log.warning("agent key %s has an unreadable rate_limit %r", key.pk, key.rate_limit)
                return f"key:{key.pk}", rate_parse(settings.API_RATE_LIMIT)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return f"user:{user.pk}", rate_parse(settings.API_RATE_LIMIT)
        return "", None  # anonymous: the health check only (every other endpoint needs auth)

    def allow_request(self, request) -> bool:
        ident, limit = self._limit(request)
        if limit is None:
            return True
        count, period = limit
        now = time.time()
        window = int(now // period)
        name = f"throttle:{ident}:{period}:{window}"
        try:
            cache.add(name, 0, timeout=period + 1)
            try:
                used = cache.incr(name)
            except ValueError:  # evicted between add and incr: count this one afresh
                cache.add(name, 1, timeout=period + 1)
                used = 1
        except Exception:  # the cache (Redis) is down: serve the request unlimited, not a 500
            log.warning("rate limit not counted: the cache is unavailable", exc_info=True)
            return True
        if used <= count:
            return True
        self._local.wait = (window + 1) * period - now
        return False

    def wait(self) -> float | None:
        return getattr(self._local, "wait", None)
