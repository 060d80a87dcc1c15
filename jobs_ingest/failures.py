"""Analyse a stored job: read its log with the pure core, store its failure and signature, then index
them. The step the Celery worker runs (jobs_ingest.tasks.analyse_job) after a job was received.

PostgreSQL is written first and is the source of truth; Elasticsearch is fed afterwards, at once or
by a task queued on commit, and can always be rebuilt with `manage.py reindex`.
"""
from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest, Least

from jobs_ingest.core import analyse_log, analyse_text
from jobs_ingest.grouping import enforce_cluster, signature_by_rule
from jobs_ingest.jobspec import SUCCESS_STATUSES
from jobs_ingest.models import Failure, Job, Signature
from jobs_ingest.search.index import IndexingError
from jobs_ingest.search.sync import index_failures
from jobs_ingest.search.tasks import enqueue_indexing
from jobs_ingest.signals import failure_analysed

log = logging.getLogger(__name__)


def analyse(job_id: int, *, index_now: bool = False) -> Failure | None:
    """Analyse a stored job's log and store its failure and signature. Safe to run twice.

    The failure is then indexed: at once when `index_now` (the worker's task, saving a round trip
    through the broker), else by a task queued on commit. Either way an Elasticsearch outage only
    delays indexing: the failure stays `indexed_at = NULL` and is retried."""
    job = Job.objects.get(pk=job_id)
    if not job.status or job.status in SUCCESS_STATUSES:
        Job.objects.filter(pk=job_id).update(ingest_state=Job.Ingest.ANALYSED, ingest_error="")
        return None
    path = Path(settings.JOBTRIAGE_LOG_DIR) / job.log_path if job.log_path else None
    try:
        if path is not None:
            analysis = analyse_log(path, exit_code=job.exit_code, signal=job.signal or None)
        else:
            analysis = analyse_text("", exit_code=job.exit_code, signal=job.signal or None)
    except OSError as exc:
        Job.objects.filter(pk=job_id).update(ingest_state=Job.Ingest.ERROR, ingest_error=f"log unreadable: {exc}")
        raise
    facts = analysis.as_dict()
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        # A person's grouping rule (merge/split, jobs_ingest/grouping.py) wins over the fingerprint.
        signature, rule = signature_by_rule(analysis) or (None, None)
        if signature is None:
            signature, _ = Signature.objects.get_or_create(
                fingerprint=analysis.fingerprint, normaliser_version=analysis.normaliser_version,
                defaults={"exception_type": analysis.exception_type[:255], "masked_message": analysis.masked_message,
                          "category": analysis.category})
        previous = Failure.objects.filter(job=job).values_list("signature_id", "gpu_seconds").first()
        gpu_seconds = sum(a.gpu_seconds for a in job.attempts.all())
        failure, _ = Failure.objects.update_or_create(job=job, defaults={
            "signature": signature, "gpu_seconds": gpu_seconds, "indexed_at": None, "grouping_rule": rule,
            **{k: facts[k] for k in FAILURE_FIELDS}})
        _update_signature(signature, failure, job, previous, analysis.category, analysis.confidence)
        enforce_cluster(signature)
        failure_analysed.send(sender=Failure, failure=failure, signature=signature,
                              new_to_signature=previous is None or previous[0] != signature.pk)
        job.ingest_state, job.ingest_error = Job.Ingest.ANALYSED, ""
        job.save(update_fields=["ingest_state", "ingest_error", "updated_at"])
        if not index_now:
            transaction.on_commit(lambda: enqueue_indexing([failure.pk]))
    if index_now:
        try:
            index_failures([failure.pk])
        except IndexingError as exc:
            log.warning("indexing failure %s deferred: %s", failure.pk, exc)
            enqueue_indexing([failure.pk])
    log.info("job %s analysed: %s (%s, rule %s) signature %s", job, analysis.category, analysis.confidence,
             analysis.rule, analysis.fingerprint)
    return failure


FAILURE_FIELDS = ("found", "failure_line", "failure_line_number", "exception_type", "message", "traceback",
                  "user_frame", "excerpt", "excerpt_start_line", "stage", "category", "dimension", "confidence",
                  "rule", "evidence", "tagger_version", "tagging_config", "grouping_config", "retry_advice", "capture",
                  "fault", "suspect_nodes")


def _update_signature(signature: Signature, failure: Failure, job: Job, previous: tuple | None,
                      category: str, confidence: float) -> None:
    """Update the signature in one statement: its automatic category (its latest failure's) and its
    counters, in place (O(1), whatever its size). A re-analysis of the same job only adjusts its GPU
    time; a failure that moved to another signature recounts the old one."""
    seen = job.ended_at or job.received_at
    moved = previous is not None and previous[0] != signature.pk
    new = previous is None or moved
    signature.category, signature.confidence = category, confidence
    Signature.objects.filter(pk=signature.pk).update(
        category=category, confidence=confidence,
        failure_count=F("failure_count") + (1 if new else 0),
        gpu_seconds=F("gpu_seconds") + failure.gpu_seconds - (0 if new else previous[1]),
        first_seen=Least(Coalesce("first_seen", Value(seen)), Value(seen)),
        last_seen=Greatest(Coalesce("last_seen", Value(seen)), Value(seen)))
    if job.team:
        locked = Signature.objects.select_for_update().only("teams").get(pk=signature.pk)
        if job.team not in locked.teams:
            locked.teams = sorted({*locked.teams, job.team})
            locked.save(update_fields=["teams"])
    if moved:
        old = Signature.objects.get(pk=previous[0])
        old.refresh_stats()
        # If this failure was the old signature's representative (its first), the next one takes over.
        # The old signature's document is recounted either way (count, GPU time, platforms, latest).
        first = old.failures.order_by("pk").values_list("pk", flat=True).first()
        successor = [first] if first is not None and first > failure.pk else []
        transaction.on_commit(lambda: enqueue_indexing(successor, signature_ids=[old.pk]))
