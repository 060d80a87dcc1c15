"""The token APIs' request and response shapes, for the OpenAPI document only (drf-spectacular reads these
serializers; the views validate with jobspec.parse_job and answer with JsonResponse, as docs/ingest.md says).
tests/integration/test_openapi.py checks real responses against the served schema."""
from __future__ import annotations

from rest_framework import serializers

from jobs_ingest.core.taxonomy import CATEGORIES
from jobs_ingest.jobspec import MAX_JOB_NODES

TIME = "ISO 8601 (`2026-11-16T08:00:00Z`; naive = UTC) or Unix seconds"


class Attempt(serializers.Serializer):
    started_at = serializers.CharField(required=False, allow_null=True, help_text=TIME)
    ended_at = serializers.CharField(required=False, allow_null=True, help_text=TIME)
    gpus = serializers.IntegerField(required=False, min_value=0)
    exit_code = serializers.IntegerField(required=False, allow_null=True)
    status = serializers.CharField(required=False)


class JobSubmission(serializers.Serializer):
    platform = serializers.CharField(help_text="where it ran: slurm, k8s, philly, ... (1-64 letters, digits, _ . -)")
    external_id = serializers.CharField(help_text="the scheduler's id for the job (string or number)")
    status = serializers.CharField(help_text="failed, killed, timeout, ...; succeeded/completed/passed/ok are not analysed")
    name = serializers.CharField(required=False)
    submitter = serializers.CharField(required=False)
    team = serializers.CharField(required=False)
    submitted_at = serializers.CharField(required=False, help_text=TIME)
    started_at = serializers.CharField(required=False, help_text=TIME)
    ended_at = serializers.CharField(required=False, help_text=TIME)
    gpus = serializers.IntegerField(required=False, min_value=0)
    exit_code = serializers.IntegerField(required=False)
    signal = serializers.CharField(required=False)
    command = serializers.CharField(required=False)
    code_version = serializers.CharField(required=False)
    image = serializers.CharField(required=False)
    nodes = serializers.JSONField(required=False, help_text=f"a Slurm hostlist string (`gpu[01-04]`) or a list of "
                                                            f"host names, at most {MAX_JOB_NODES}")
    attempts = Attempt(many=True, required=False, help_text="one per retry or requeue; GPU cost sums over them")
    log_text = serializers.CharField(required=False, help_text="the job's log (JSON bodies); big logs: multipart")


class JobUpload(serializers.Serializer):
    metadata = serializers.CharField(help_text="the job's metadata as JSON (JobSubmission without log_text)")
    log = serializers.FileField(required=False, help_text="the log file, any size up to the configured limit")


class JobAccepted(serializers.Serializer):
    id = serializers.IntegerField()
    platform = serializers.CharField()
    external_id = serializers.CharField()
    created = serializers.BooleanField(help_text="false when a job with this platform and external_id was updated")
    url = serializers.URLField(help_text="the job's page")
    status_url = serializers.URLField(help_text="GET it to follow the analysis")


class BulkResult(serializers.Serializer):
    index = serializers.IntegerField()
    status = serializers.IntegerField(help_text="202 accepted, 400 invalid, 403 out of scope, 409 exists out of scope, 413")
    error = serializers.CharField(required=False)
    fields = serializers.DictField(child=serializers.CharField(), required=False)
    id = serializers.IntegerField(required=False)
    platform = serializers.CharField(required=False)
    external_id = serializers.CharField(required=False)
    created = serializers.BooleanField(required=False)
    url = serializers.URLField(required=False)
    status_url = serializers.URLField(required=False)


class BulkAnswer(serializers.Serializer):
    accepted = serializers.IntegerField()
    rejected = serializers.IntegerField()
    results = BulkResult(many=True)


class FailureSummary(serializers.Serializer):
    category = serializers.ChoiceField(choices=sorted(CATEGORIES))
    dimension = serializers.CharField()
    confidence = serializers.FloatField()
    rule = serializers.CharField()
    stage = serializers.CharField()
    exception_type = serializers.CharField(allow_blank=True)
    failure_line = serializers.CharField(allow_blank=True)
    fingerprint = serializers.CharField()
    retry_advice = serializers.CharField()
    gpu_hours = serializers.FloatField()
    indexed = serializers.BooleanField(help_text="searchable in similar-failure search")
    why_unclassified = serializers.CharField(allow_blank=True, help_text="for an unclassified failure, why the rules "
                                             "left it so, in words; empty otherwise")


class JobStatus(serializers.Serializer):
    id = serializers.IntegerField()
    platform = serializers.CharField()
    external_id = serializers.CharField()
    status = serializers.CharField()
    ingest_state = serializers.CharField(help_text="queued, analysed, failed, ...")
    ingest_error = serializers.CharField(allow_blank=True)
    failure = FailureSummary(allow_null=True, help_text="null until analysed, or for a job that succeeded")


class Error(serializers.Serializer):
    error = serializers.CharField(help_text="what is wrong, in words")
    fields = serializers.DictField(child=serializers.CharField(), required=False,
                                   help_text="bad metadata: one message per field")
    retry_after = serializers.IntegerField(required=False, help_text="seconds; also in the Retry-After header")
    limit = serializers.IntegerField(required=False)
    window_seconds = serializers.IntegerField(required=False)


class SimilarFilters(serializers.Serializer):
    team = serializers.JSONField(required=False, help_text="a team or a list of teams")
    platform = serializers.JSONField(required=False, help_text="a platform or a list")
    category = serializers.JSONField(required=False, help_text="a category id or a list")
    ended_after = serializers.CharField(required=False)
    ended_before = serializers.CharField(required=False)
    only_resolved = serializers.BooleanField(required=False)


class SimilarRequest(serializers.Serializer):
    text = serializers.CharField(help_text="an error message or a whole log")
    filters = SimilarFilters(required=False)
    top = serializers.IntegerField(required=False, min_value=1, default=10)
    strategy = serializers.CharField(required=False)


class SimilarHit(serializers.Serializer):
    signature_id = serializers.CharField()
    failure_id = serializers.CharField()
    platform = serializers.CharField()
    external_id = serializers.CharField()
    fingerprint = serializers.CharField()
    category = serializers.CharField()
    confirmed_category = serializers.CharField(allow_blank=True)
    root_cause = serializers.CharField(allow_blank=True)
    triage_state = serializers.CharField(allow_blank=True)
    score = serializers.FloatField()
    message = serializers.CharField(allow_blank=True)
    exception_type = serializers.CharField(allow_blank=True)
    masked_message = serializers.CharField(allow_blank=True)
    job_id = serializers.CharField(allow_blank=True)
    job_name = serializers.CharField(allow_blank=True)
    team = serializers.CharField(allow_blank=True)
    failure_line = serializers.CharField(allow_blank=True)
    stage = serializers.CharField(allow_blank=True)
    ended_at = serializers.CharField(allow_null=True)
    same_fingerprint = serializers.BooleanField()
    count = serializers.IntegerField(help_text="failures of the signature across the whole index")
    gpu_hours = serializers.FloatField()
    signature_url = serializers.CharField(allow_null=True)
    job_url = serializers.CharField(allow_null=True)


class SimilarAnswer(serializers.Serializer):
    hits = SimilarHit(many=True)
