"""POST /api/v1/similar: past failures like a pasted error message or log, as JSON.

Request: {"text": "...", "filters": {"team", "platform", "category", "ended_after", "ended_before",
"only_resolved"}, "top": 10} (filters and top optional). Authenticated by an ingestion token
(`Authorization: Token <key>`; a token limited to a platform or team only sees that platform or team) or
by a logged-in user's session (then with Django's CSRF check, as any browser POST).

Answers 200 {"hits": [...]} (see jobs_ingest.search.similar.Hit; plus signature_url and job_url), 400 JSON for
bad input, 401 without authentication, 503 when Elasticsearch is unavailable. Never 500 for a query.
"""
from __future__ import annotations

import json
import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.urls import NoReverseMatch, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema

from jobs_ingest import api_schema, rest
from jobs_ingest.api_auth import error
from jobs_ingest.models import IngestToken
from jobs_ingest.views import TokenAPIView
from jobs_ingest.search import query, similar
from jobs_ingest.search.sync import es_client

log = logging.getLogger(__name__)


def _scoped(filters: dict, token: IngestToken | None) -> dict | None:
    """Filters narrowed to the token's platform/team; None if they ask for something outside it."""
    if token is None:
        return filters
    scoped = dict(filters)
    for name in ("platform", "team"):
        allowed = getattr(token, name)
        if not allowed:
            continue
        asked = scoped.get(name)
        asked = [asked] if isinstance(asked, str) and asked else asked
        if asked and (not isinstance(asked, list) or allowed not in asked):
            return None
        scoped[name] = allowed
    return scoped


def _url(name: str, value: str) -> str | None:
    try:
        return reverse(name, args=[int(value)])
    except (NoReverseMatch, ValueError, TypeError):
        return None


def hit_json(hit: similar.Hit, request=None) -> dict:
    body = hit.as_dict()
    for key, name, value in (("signature_url", "signature-detail", hit.signature_id),
                             ("job_url", "job-detail", hit.job_id)):
        url = _url(name, value)
        body[key] = request.build_absolute_uri(url) if url and request is not None else url
    return body


class SimilarView(TokenAPIView):
    authentication_classes = [rest.IngestTokenAuthentication, rest.CsrfCheckedSessionAuthentication]
    unauthenticated_message = "authentication required: send 'Authorization: Token <key>' or log in"
    method_message = "use POST with a JSON body {\"text\": ...}"

    @extend_schema(operation_id="similar_failures", summary="Past failures like an error message or a log",
                   request=api_schema.SimilarRequest,
                   responses={200: api_schema.SimilarAnswer,
                              **{status: OpenApiResponse(api_schema.Error, description=text) for status, text in (
                                  (400, "bad body, filters or strategy"), (401, "no token or session"),
                                  (403, "CSRF check failed (session)"), (413, "body too large"),
                                  (429, "rate limit exceeded (Retry-After)"),
                                  (503, "search or database unavailable (Retry-After for the database)"))}})
    def post(self, request):
        token = request.auth
        try:
            data = json.loads(request._request.body)
        except RequestDataTooBig:
            return error(413, "the request body is too large")
        except (ValueError, RecursionError) as exc:
            return error(400, f"the body is not valid JSON: {str(exc)[:200]}")
        if not isinstance(data, dict):
            return error(400, "the body must be a JSON object {\"text\": ...}")
        text, filters, top = data.get("text"), data.get("filters"), data.get("top", 10)
        filters = {} if filters is None else filters
        strategy = data.get("strategy", query.DEFAULT_STRATEGY)
        if not isinstance(text, str):
            return error(400, "'text' is required and must be a string (an error message or a log)")
        if not isinstance(filters, dict):
            return error(400, "'filters' must be an object")
        if not isinstance(strategy, str):
            return error(400, "'strategy' must be a string")
        scoped = _scoped(filters, token)
        try:
            query.filter_clauses(filters)  # validate what was asked, even when the scope empties it
            hits = [] if scoped is None else similar.similar_failures(
                es_client(), settings.ES_INDEX_PREFIX, text, filters=scoped, top=top, strategy=strategy)
        except query.BadQuery as exc:
            return error(400, str(exc))
        except query.SearchUnavailable as exc:
            log.warning("similar search unavailable: %s", exc)
            return error(503, "search is unavailable right now; try again later")
        return JsonResponse({"hits": [hit_json(h, request) for h in hits]})
