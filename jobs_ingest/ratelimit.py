"""Fixed-window rate limits for the ingestion API, counted in Redis.

One counter per (scope, identity, window): INCR and EXPIRE run together in a Lua script, so every
web process sees the same count and a counter never outlives its window. If Redis cannot be
reached the request is allowed (ingestion matters more than the limit) and the outage is logged,
at most once per LOG_EVERY seconds so that a Redis outage under load does not flood the logs.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import connection

log = logging.getLogger(__name__)
LOG_EVERY = 30.0

# Returns the count after this hit and the key's remaining time to live in milliseconds.
_HIT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}
"""

_clients: dict[str, redis.Redis] = {}
_last_outage_log = 0.0


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    window: int
    retry_after: int = 0  # whole seconds until the window ends (only when refused)


def _client() -> redis.Redis:
    url = settings.JOBTRIAGE_RATE_LIMIT_REDIS_URL
    if url not in _clients:
        # Short timeouts: a slow or absent Redis must cost a request milliseconds, not seconds.
        _clients[url] = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5,
                                             retry_on_timeout=False)
    return _clients[url]


def _namespace() -> str:
    # Counters are per database as well, so two deployments (or test runs) sharing a Redis keep
    # separate counts.
    return f"{settings.JOBTRIAGE_RATE_LIMIT_KEY_PREFIX}:{connection.settings_dict.get('NAME')}"


def hit(scope: str, identity: str, limit: int, window: int | None = None) -> Decision:
    """Count one request of `identity` (a token hash, a client address) against `limit` requests
    per `window` seconds (JOBTRIAGE_RATE_LIMIT_WINDOW by default). A limit of 0 or less means no limit."""
    return _count(scope, identity, limit, window, add=True)


def check(scope: str, identity: str, limit: int, window: int | None = None) -> Decision:
    """Whether `identity` is already over `limit` in this window, without counting anything (e.g. a
    login is refused before its password is tried, and only failures are counted)."""
    return _count(scope, identity, limit, window, add=False)


def _count(scope: str, identity: str, limit: int, window: int | None, *, add: bool) -> Decision:
    window = max(1, int(window or settings.JOBTRIAGE_RATE_LIMIT_WINDOW))
    if limit <= 0:
        return Decision(True, limit, window)
    window_start = int(time.time()) // window * window
    key = f"{_namespace()}:{scope}:{identity}:{window_start}"
    try:
        if add:
            count, ttl_ms = _client().eval(_HIT, 1, key, window * 1000)
        else:
            with _client().pipeline(transaction=False) as pipe:
                count, ttl_ms = pipe.get(key).pttl(key).execute()
            count = int(count or 0) + 1   # as if this request were counted
    except (redis.RedisError, OSError) as exc:
        _log_outage(exc)
        return Decision(True, limit, window)
    if count <= limit:
        return Decision(True, limit, window)
    retry_after = max(1, math.ceil(ttl_ms / 1000)) if ttl_ms and ttl_ms > 0 else window
    return Decision(False, limit, window, retry_after)


def _log_outage(exc: Exception) -> None:
    global _last_outage_log
    now = time.monotonic()
    if now - _last_outage_log >= LOG_EVERY:
        _last_outage_log = now
        log.warning("rate limiter cannot reach Redis (%s): requests are allowed without a limit until it returns", exc)


def client_address(request) -> str:
    """The client's IP address. Behind JOBTRIAGE_TRUSTED_PROXIES reverse proxies, the address the
    outermost trusted proxy saw (taken from the right of X-Forwarded-For: the left part can be forged)."""
    proxies = settings.JOBTRIAGE_TRUSTED_PROXIES
    if proxies > 0:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR", "") or "unknown"
