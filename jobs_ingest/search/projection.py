"""Search documents from the facts in PostgreSQL: one document per failure, one per signature.

The fields other apps add (triage's judgments) come through search.fields, asked once per batch.
The documents' shapes are fixed by the strict mappings in search.index and docs/CONTRACTS.md.
"""
from __future__ import annotations

from typing import Iterable

from django.db import connection
from django.db.models import Min

from jobs_ingest.models import Failure, Job, Signature
from jobs_ingest.search import fields, index


def failures_for_index():
    return Failure.objects.select_related("job", "signature").prefetch_related("job__attempts").order_by("pk")


def failure_documents(failures: Iterable[Failure], batch_size: int = 500) -> Iterable[dict]:
    batch: list[Failure] = []
    for failure in failures:
        batch.append(failure)
        if len(batch) >= batch_size:
            yield from _failure_batch(batch)
            batch = []
    if batch:
        yield from _failure_batch(batch)


def _failure_batch(failures: list[Failure]) -> Iterable[dict]:
    first_failure = dict(Failure.objects.filter(signature_id__in={f.signature_id for f in failures})
                         .values_list("signature_id").annotate(first=Min("id")))
    extras = fields.failure_fields(failures)
    for failure in failures:
        job = failure.job
        yield extras.get(failure.pk, {}) | {
            "failure_id": str(failure.pk), "job_id": str(job.pk), "signature_id": str(failure.signature_id),
            "fingerprint": failure.signature.fingerprint, "cluster": failure.signature.cluster, "platform": job.platform, "external_id": job.external_id,
            "submitter": job.submitter, "team": job.team, "status": job.status, "job_name": job.name,
            "exception_type": failure.exception_type, "user_frame": failure.user_frame, "stage": failure.stage,
            "category": failure.category, "dimension": failure.dimension, "rule": failure.rule,
            "retry_advice": failure.retry_advice, "tagger_version": failure.tagger_version,
            "normaliser_version": failure.signature.normaliser_version,
            "message": failure.message, "masked_message": failure.signature.masked_message,
            "failure_line": failure.failure_line, "traceback": failure.traceback, "excerpt": failure.excerpt,
            "gpus": job.gpus, "attempts": len(job.attempts.all()), "gpu_hours": failure.gpu_hours,
            "confidence": failure.confidence, "failure_line_number": failure.failure_line_number,
            "submitted_at": job.submitted_at, "started_at": job.started_at, "ended_at": job.ended_at,
            "ingested_at": failure.analysed_at,
            "representative": first_failure.get(failure.signature_id) == failure.pk,
        }


def signature_document(signature: Signature, extra: dict, platforms: Iterable[str], latest: Failure | None) -> dict:
    """The signature's document: counters, GPU time, first/last seen and teams from its row (kept exact
    at ingest), `extra` from search.fields (its judgment), the platforms and latest failure given."""
    return index.signature_document(
        signature_id=signature.pk, fingerprint=signature.fingerprint,
        normaliser_version=signature.normaliser_version, exception_type=signature.exception_type,
        masked_message=signature.masked_message, category=signature.category, cluster=signature.cluster,
        confirmed_category=extra.get("confirmed_category") or "", root_cause=extra.get("root_cause") or "",
        triage_state=extra.get("triage_state") or "", failure_count=signature.failure_count,
        gpu_hours=signature.gpu_seconds / 3600, first_seen=signature.first_seen, last_seen=signature.last_seen,
        teams=signature.teams, platforms=platforms, latest_failure=_latest_document(latest))


def _seen(failure: Failure):
    return failure.job.ended_at or failure.job.received_at


def _latest_document(failure: Failure | None) -> dict:
    if failure is None:
        return {}
    job = failure.job
    return {"failure_id": failure.pk, "job_id": job.pk, "platform": job.platform, "external_id": job.external_id,
            "job_name": job.name, "team": job.team, "message": failure.message, "failure_line": failure.failure_line,
            "stage": failure.stage, "ended_at": job.ended_at}


def latest_failure(signature: Signature, candidates: list[Failure]) -> Failure | None:
    """The signature's most recent failure: one being indexed when it is (the usual case at ingest,
    no query), else the one whose job ended at last_seen (an indexed lookup), else the newest row."""
    best = max(candidates, key=lambda f: (_seen(f), f.pk), default=None)
    if best is not None and (signature.last_seen is None or _seen(best) >= signature.last_seen):
        return best
    rows = Failure.objects.select_related("job").filter(signature_id=signature.pk)
    if signature.last_seen is not None:
        found = rows.filter(job__ended_at=signature.last_seen).order_by("-pk").first()
        if found is not None:
            return found
    return rows.order_by("-pk").first() or best


def platforms_of(signature_id: int) -> set[str]:
    """O(failures of the signature): only when its document is first written or recounted."""
    return set(Job.objects.filter(failure__signature_id=signature_id).values_list("platform", flat=True).distinct())


def all_signature_documents(batch_size: int = 2000) -> Iterable[dict]:
    """Every signature's document, for a rebuild: platforms and latest failure computed for all
    signatures in one pass over the failures (per signature lookups would be O(failures) each)."""
    failure, job = Failure._meta.db_table, Job._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT f.signature_id, array_agg(DISTINCT j.platform), "
            f"(array_agg(f.id ORDER BY COALESCE(j.ended_at, j.received_at) DESC, f.id DESC))[1] "
            f"FROM {failure} f JOIN {job} j ON j.id = f.job_id GROUP BY f.signature_id")
        summary = {row[0]: (set(row[1]), row[2]) for row in cursor.fetchall()}
    ids = sorted(summary)
    for start in range(0, len(ids), batch_size):
        chunk = ids[start:start + batch_size]
        signatures = list(Signature.objects.filter(pk__in=chunk).order_by("pk"))
        extras = fields.signature_fields(signatures)
        latest = {f.pk: f for f in Failure.objects.select_related("job").filter(pk__in=[summary[s][1] for s in chunk])}
        for signature in signatures:
            platforms, latest_id = summary[signature.pk]
            yield signature_document(signature, extras.get(signature.pk, {}), platforms, latest.get(latest_id))


def signatures_with_failures_count() -> int:
    return Signature.objects.filter(failure_count__gt=0).count()
