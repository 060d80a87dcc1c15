"""Django REST framework glue for the token APIs (ingestion, similar search): authentication, the per-token
throttle, one exception handler that keeps the API's error bodies ({"error": message, ...}), and the OpenAPI
description of the token scheme (drf-spectacular).

Views answer with JsonResponse bodies built by the same code as before DRF; DRF passes them through
untouched. Failed authentication stays in the authentication class (not a DRF throttle) because its limit
counts failed attempts per client address, which only authentication knows about.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponseBase
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.throttling import BaseThrottle

from jobs_ingest import ratelimit
from jobs_ingest.api_auth import _too_many, authenticate_token, error, failed_attempt
from jobs_ingest.models import IngestToken


class Answered(exceptions.APIException):
    """Stop here and send this response as it is (an error body the API already shaped)."""

    def __init__(self, response: HttpResponseBase):
        super().__init__(detail="answered")
        self.response = response


class IngestTokenAuthentication(BaseAuthentication):
    """`Authorization: Token <key>` (or Bearer): an ingestion token (jobs_ingest.models.IngestToken).
    request.auth is the token; request.user stays anonymous (a token is not a person). A request without an
    Authorization header passes on (to a browser session where the view allows one, else to the 401 of the
    exception handler); a bad token is answered 401 here, or 429 once its address failed too often."""

    def authenticate(self, request):
        if not request.headers.get("Authorization"):
            return None
        token, rejected = authenticate_token(request._request)
        if rejected is not None:
            raise Answered(rejected)
        return AnonymousUser(), token

    def authenticate_header(self, request) -> str:
        return 'Token realm="api"'


class CsrfCheckedSessionAuthentication(SessionAuthentication):
    """A logged-in browser: Django's session, with the CSRF check a token client does not need."""

    def enforce_csrf(self, request):
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied:
            raise Answered(error(403, "CSRF check failed: send the csrftoken cookie and X-CSRFToken header"))


class TokenOrUser(BasePermission):
    """An ingestion token, or a logged-in user (only where the view lists session authentication)."""

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, IngestToken) or bool(request.user and request.user.is_authenticated)


class PerTokenRateThrottle(BaseThrottle):
    """JOBTRIAGE_RATE_LIMIT_PER_TOKEN requests per window for each token (ratelimit.py, shared by every
    process through Redis). Session users are not throttled here (the pages have their own limits)."""

    def allow_request(self, request, view) -> bool:
        token = request.auth
        if not isinstance(token, IngestToken):
            return True
        self.decision = ratelimit.hit("token", token.key_hash[:32], settings.JOBTRIAGE_RATE_LIMIT_PER_TOKEN)
        if not self.decision.allowed:
            raise Answered(_too_many(self.decision, "requests with this token"))
        return True


def api_exception_handler(exc, context):
    """The API's own error bodies for what DRF raises; a response already shaped passes as it is."""
    if isinstance(exc, Answered):
        return exc.response
    view = context.get("view")
    if isinstance(exc, exceptions.NotAuthenticated):
        response = failed_attempt(context["request"]._request,
                                  getattr(view, "unauthenticated_message", "authentication required"))
        if response.status_code == 401:
            response["WWW-Authenticate"] = 'Token realm="api"'
        return response
    if isinstance(exc, exceptions.MethodNotAllowed):
        allowed = ", ".join(getattr(view, "allowed_methods", []))
        response = error(405, getattr(view, "method_message", f"method not allowed; use {allowed}"))
        response["Allow"] = allowed
        return response
    from rest_framework.views import exception_handler  # (rest_framework.views reads this module's setting)

    response = exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data.get("detail", response.data) if isinstance(response.data, dict) else response.data
    return error(response.status_code, str(detail))


class IngestTokenScheme(OpenApiAuthenticationExtension):
    target_class = "jobs_ingest.rest.IngestTokenAuthentication"
    name = "IngestToken"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "An ingestion token: `Authorization: Token <key>` (`Bearer <key>` works too). "
                               "Make one with `manage.py create_token`; a token limited to a platform or team "
                               "only reads and writes that platform's or team's jobs."}


class SessionScheme(OpenApiAuthenticationExtension):
    target_class = "jobs_ingest.rest.CsrfCheckedSessionAuthentication"
    name = "Session"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": "sessionid",
                "description": "A logged-in browser session (similar search only), with the csrftoken cookie "
                               "and the X-CSRFToken header."}
