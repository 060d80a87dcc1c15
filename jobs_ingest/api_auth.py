"""What both JSON APIs (ingestion, similar search) share: token authentication with its rate limits, and
errors as JSON ({"error": message, ...}, with Retry-After when the client should come back later)."""
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

    Each token has its own rate limit; failed attempts are limited per client address, so that
    guessing tokens is slow and one misconfigured client cannot starve the others."""
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    token = None
    if scheme.lower() in ("token", "bearer") and key.strip():
        token = IngestToken.authenticate(key.strip())
    if token is None:
        decision = ratelimit.hit("anonymous", ratelimit.client_address(request), settings.JOBTRIAGE_RATE_LIMIT_ANONYMOUS)
        if not decision.allowed:
            return None, _too_many(decision, "failed authentication attempts from this address")
        if scheme.lower() not in ("token", "bearer") or not key.strip():
            return None, error(401, "authentication required: send 'Authorization: Token <key>'")
        return None, error(401, "invalid or revoked token")
    decision = ratelimit.hit("token", token.key_hash[:32], settings.JOBTRIAGE_RATE_LIMIT_PER_TOKEN)
    if not decision.allowed:
        return None, _too_many(decision, "requests with this token")
    return token, None


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


def token_required(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        token, rejected = authenticate_token(request)
        if rejected is not None:
            return rejected
        request.ingest_token = token
        return view(request, *args, **kwargs)
    return wrapper
