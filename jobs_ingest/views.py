"""The ingestion API: POST /api/v1/jobs (token auth; one job, or a JSON array of up to
JOBTRIAGE_API_MAX_BATCH jobs stored in one batch) and GET /api/v1/jobs/<id>.

Django REST framework views (authentication, throttle and error bodies in rest.py; their OpenAPI shapes in
api_schema.py). The body is read as the Django request's, as before DRF: metadata are validated by
jobspec.parse_job, which names every bad field. Errors are JSON with a message and, for bad metadata, one
entry per field. Nothing already stored is changed by a rejected request.
"""
import io
import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.views import APIView

from jobs_ingest import api_schema, rest, services
from jobs_ingest.api_auth import database_unavailable_is_503, error
from jobs_ingest.core.taxonomy import why_unclassified
from jobs_ingest.jobspec import JobSpecError, parse_job


def _read_request(request):
    """(metadata dict, log stream or None) from a JSON body or a multipart form."""
    content_type = request.content_type or ""
    if content_type == "application/json":
        try:
            data = json.loads(request.body)
        except (ValueError, RecursionError) as exc:
            raise JobSpecError({"body": f"is not valid JSON: {str(exc)[:200]}"}) from None
        if not isinstance(data, dict):
            raise JobSpecError({"body": "must be a JSON object"})
        log_text = data.pop("log_text", None)
        if log_text is not None and not isinstance(log_text, str):
            raise JobSpecError({"log_text": "must be a string"})
        return data, io.BytesIO(log_text.encode("utf-8", errors="replace")) if log_text is not None else None
    if content_type == "multipart/form-data":
        raw = request.POST.get("metadata")
        if raw is None:
            raise JobSpecError({"metadata": "form field is required (the job's metadata as JSON)"})
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise JobSpecError({"metadata": f"is not valid JSON: {str(exc)[:200]}"}) from None
        upload = request.FILES.get("log")
        return data, upload.file if upload is not None else None
    raise ValueError(content_type)


def _bulk_items(request) -> list | None:
    """The JSON array of a bulk submission, or None for a single job."""
    if (request.content_type or "") != "application/json" or not request.body.lstrip().startswith(b"["):
        return None
    try:
        items = json.loads(request.body)
    except (ValueError, RecursionError) as exc:
        raise JobSpecError({"body": f"is not valid JSON: {str(exc)[:200]}"}) from None
    if len(items) > settings.JOBTRIAGE_API_MAX_BATCH:
        raise JobSpecError({"body": f"at most {settings.JOBTRIAGE_API_MAX_BATCH} jobs per request"})
    return items


def _submit_many(request, items: list) -> JsonResponse:
    """POST a JSON array of jobs (each as in a single JSON submission, log_text included): stored in one
    batch. Each item gets its own result; one bad item never keeps the others out. 202 when all were
    accepted, 207 with the reasons when some were, 400 when none was."""
    token, results, pairs, where = request.auth, [None] * len(items), [], []
    for n, data in enumerate(items):
        try:
            if not isinstance(data, dict):
                raise JobSpecError({"item": "must be a JSON object"})
            data = dict(data)
            log_text = data.pop("log_text", None)
            if log_text is not None and not isinstance(log_text, str):
                raise JobSpecError({"log_text": "must be a string"})
            spec = parse_job(data)
        except JobSpecError as exc:
            results[n] = {"index": n, "status": 400, "error": "invalid job metadata", "fields": exc.fields}
            continue
        if not token.allows(spec.platform, spec.team):
            results[n] = {"index": n, "status": 403, "error": "this token may not submit jobs for this platform or team"}
            continue
        pairs.append((spec, io.BytesIO(log_text.encode("utf-8", errors="replace")) if log_text is not None else None))
        where.append(n)
    outcomes = services.receive_jobs(pairs, may_update=lambda job: token.allows(job.platform, job.team))
    for n, outcome in zip(where, outcomes):
        if isinstance(outcome, services.UpdateRefused):
            results[n] = {"index": n, "status": 409, "error": "a job with this platform and external_id already "
                          "exists outside this token's scope; nothing was changed"}
        elif isinstance(outcome, Exception):
            results[n] = {"index": n, "status": 413 if "larger" in str(outcome) else 400, "error": str(outcome)}
        else:
            results[n] = {"index": n, "status": 202, **_accepted(request, outcome)}
    accepted = sum(r["status"] == 202 for r in results)
    if not accepted:
        return error(400, "invalid job metadata", fields={"body": "no job of the array was accepted (see results)"},
                     accepted=0, rejected=len(items), results=results)
    return JsonResponse({"accepted": accepted, "rejected": len(items) - accepted, "results": results},
                        status=202 if accepted == len(items) else 207)


def _accepted(request, received) -> dict:
    job = received.job
    return {"id": job.pk, "platform": job.platform, "external_id": job.external_id, "created": received.created,
            "url": request.build_absolute_uri(reverse("job-detail", args=[job.pk])),
            "status_url": request.build_absolute_uri(reverse("api-job", args=[job.pk]))}


class TokenAPIView(APIView):
    """A view of the token API: an ingestion token is required, each token is throttled."""
    authentication_classes = [rest.IngestTokenAuthentication]
    permission_classes = [rest.TokenOrUser]
    throttle_classes = [rest.PerTokenRateThrottle]
    unauthenticated_message = "authentication required: send 'Authorization: Token <key>'"

    @classmethod
    def as_view(cls, **initkwargs):
        # PostgreSQL down (also while authenticating): 503 with Retry-After, never a 500 page.
        return database_unavailable_is_503(super().as_view(**initkwargs))


ERRORS = {status: OpenApiResponse(api_schema.Error, description=text) for status, text in (
    (400, "invalid job metadata (`fields` names each bad field) or body"),
    (401, "no token, or an invalid or revoked one"),
    (403, "the token may not submit jobs for this platform or team"),
    (409, "a job with this platform and external_id exists outside the token's scope; nothing changed"),
    (413, "body or log too large"),
    (415, "not application/json or multipart/form-data"),
    (429, "rate limit exceeded (Retry-After)"),
    (503, "database unavailable; nothing was stored (Retry-After)"))}


class JobsView(TokenAPIView):
    parser_classes = [JSONParser, MultiPartParser]

    @extend_schema(
        operation_id="submit_job", summary="Submit a failed (or finished) job with its log",
        description="One job as a JSON object (log in `log_text`) or as multipart/form-data (`metadata` JSON and "
                    "a `log` file), or up to JOBTRIAGE_API_MAX_BATCH jobs as a JSON array stored in one batch. "
                    "A job with the same platform and external_id is updated. The analysis runs in the background: "
                    "follow `status_url`.",
        request={"application/json": api_schema.JobSubmission, "multipart/form-data": api_schema.JobUpload},
        responses={202: OpenApiResponse(api_schema.JobAccepted, description="accepted (a JSON array: BulkAnswer)"),
                   207: OpenApiResponse(api_schema.BulkAnswer, description="a JSON array: some jobs accepted"),
                   **ERRORS})
    def post(self, request):
        django_request = request._request
        try:
            items = _bulk_items(django_request)
        except RequestDataTooBig:
            return error(413, "request too large for a JSON body: send big logs as a multipart file upload (field 'log')")
        except JobSpecError as exc:
            return error(400, "invalid job metadata", fields=exc.fields)
        if items is not None:
            return _submit_many(request, items)
        try:
            data, log_stream = _read_request(django_request)
            spec = parse_job(data)
        except RequestDataTooBig:
            return error(413, "request too large for a JSON body: send big logs as a multipart file upload (field 'log')")
        except JobSpecError as exc:
            return error(400, "invalid job metadata", fields=exc.fields)
        except ValueError as exc:
            return error(415, f"unsupported content type '{exc}': send application/json or multipart/form-data")
        token = request.auth
        if not token.allows(spec.platform, spec.team):
            return error(403, "this token may not submit jobs for this platform or team")
        try:
            received = services.receive_job(spec, log_stream,
                                            may_update=lambda job: token.allows(job.platform, job.team))
        except services.LogRejected as exc:
            return error(413 if "larger" in str(exc) else 400, str(exc))
        except services.UpdateRefused:
            # Said plainly: the sender already knows this platform + external id (it sent them).
            return error(409, "a job with this platform and external_id already exists outside this token's "
                              "scope; nothing was changed", platform=spec.platform, external_id=spec.external_id)
        return JsonResponse(_accepted(django_request, received), status=202)


class JobStatusView(TokenAPIView):
    @extend_schema(operation_id="job_status", summary="A job's ingest state and, once analysed, its failure",
                   responses={200: api_schema.JobStatus,
                              404: OpenApiResponse(api_schema.Error, description="no such job in the token's scope"),
                              **{k: v for k, v in ERRORS.items() if k in (401, 429, 503)}})
    def get(self, request, job_id: int):
        # Out of the token's scope answers exactly like a job that does not exist.
        job = request.auth.visible_jobs().filter(pk=job_id).select_related("failure__signature").first()
        if job is None:
            return error(404, "no such job")
        body = {"id": job.pk, "platform": job.platform, "external_id": job.external_id, "status": job.status,
                "ingest_state": job.ingest_state, "ingest_error": job.ingest_error, "failure": None}
        failure = getattr(job, "failure", None)
        if failure is not None:
            body["failure"] = {"category": failure.category, "dimension": failure.dimension,
                               "confidence": failure.confidence, "rule": failure.rule, "stage": failure.stage,
                               "exception_type": failure.exception_type, "failure_line": failure.failure_line,
                               "fingerprint": failure.signature.fingerprint, "retry_advice": failure.retry_advice,
                               "gpu_hours": round(failure.gpu_hours, 4), "indexed": failure.indexed_at is not None,
                               "why_unclassified": why_unclassified(failure.rule)}
        return JsonResponse(body)
