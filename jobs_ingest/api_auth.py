"""What both JSON APIs (ingestion, similar search) share: token authentication with its limit on failed
attempts (rest.py plugs it into Django REST framework), and errors as JSON ({"error": message, ...}, with Retry-After when the client should come back later)."""
import logging
from functools import wraps

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import JsonResponse

from jobs_ingest import ratelimit
from jobs_ingest.models import IngestToken

log = logging.getLogger(__name__)
DATABASE_RETRY_AFTER = 10  # seconds: a PostgreSQL restart or failover usually takes a few


def error(status: int, message: str, *, retry_after: int | None = None, **extra) -> JsonResponse:
    if retry_after is not None:
        extra["retry_after"] = retry_after
    response = JsonResponse({"error": message, **extra}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def authenticate_token(request) -> tuple[IngestToken | None, JsonResponse | None]:
    """The ingestion token of `Authorization: Token <key>` (or Bearer), or the 401/429 to answer.

    Failed attempts are limited per client address, so that guessing tokens is slow; each token's own
    limit is rest.PerTokenRateThrottle's, so that one misconfigured client cannot starve the others."""
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    token = None
    if scheme.lower() in ("token", "bearer") and key.strip():
        token = IngestToken.authenticate(key.strip())
    if token is None:
        if scheme.lower() not in ("token", "bearer") or not key.strip():
            return None, failed_attempt(request, "authentication required: send 'Authorization: Token <key>'")
        return None, failed_attempt(request, "invalid or revoked token")
    return token, None


def failed_attempt(request, message: str) -> JsonResponse:
    """A request without valid credentials: 401 with `message`, or 429 once this address has failed too often."""
    decision = ratelimit.hit("anonymous", ratelimit.client_address(request), settings.JOBTRIAGE_RATE_LIMIT_ANONYMOUS)
    if not decision.allowed:
        return _too_many(decision, "failed authentication attempts from this address")
    return error(401, message)


def _too_many(decision: ratelimit.Decision, what: str) -> JsonResponse:
    return error(429, f"rate limit exceeded: at most {decision.limit} {what} per {decision.window} s; "
                      f"retry after {decision.retry_after} s", retry_after=decision.retry_after,
                 limit=decision.limit, window_seconds=decision.window)


def database_unavailable_is_503(view):
    """PostgreSQL down or restarting: answer 503 with Retry-After (nothing was accepted, the client
    sends the job again) instead of a 500 page. Django closes the broken connection at the end of
    the request, so the next request reconnects."""
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except (OperationalError, InterfaceError) as exc:
            log.warning("database unavailable for %s %s: %s", request.method, request.path, exc)
            return error(503, "the database is unavailable; nothing was stored: send the job again later",
                         retry_after=DATABASE_RETRY_AFTER)
    return wrapper
