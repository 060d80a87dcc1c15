"""Celery tasks: thin, idempotent shells around jobs_ingest.services. They take ids, not objects."""
from datetime import timedelta

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from jobs_ingest import search_index, services
from jobs_ingest.models import Failure, Job
from jobs_ingest.search_index import IndexingError


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=8)
def analyse_job(job_id: int) -> str:
    try:
        failure = services.analyse(job_id, index_now=True)
    except Job.DoesNotExist:
        return f"job {job_id} no longer exists"
    return f"job {job_id}: {failure.category if failure else 'no failure (job succeeded)'}"


@shared_task(acks_late=True, autoretry_for=(IndexingError, OperationalError), retry_backoff=5,
             retry_backoff_max=600, max_retries=30)
def index_failures(failure_ids: list[int], signature_ids: list[int] | None = None) -> str:
    """Elasticsearch down or slow: retry with backoff for about four hours; the database holds the truth
    and, after that, requeue_pending sends whatever is still unindexed once Elasticsearch answers again.
    signature_ids: signatures whose documents are recounted too (one that a failure moved out of)."""
    done = services.index_failures(failure_ids, signature_ids=signature_ids)
    return f"{done} failures indexed" + (f", signatures {signature_ids} recounted" if signature_ids else "")


@shared_task(acks_late=True)
def requeue_pending(older_than_seconds: int = 120) -> str:
    """Catch what a broker outage left behind: jobs stored but never analysed, failures never indexed."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    jobs = list(Job.objects.filter(ingest_state=Job.Ingest.QUEUED, updated_at__lt=cutoff).values_list("pk", flat=True)[:5000])
    for job_id in jobs:
        analyse_job.delay(job_id)
    if not search_index.health(services.es_client()):
        # Indexing tasks already queued keep retrying; queueing more every beat would only pile up copies.
        return f"requeued {len(jobs)} jobs; Elasticsearch unavailable, indexing left to the retrying tasks"
    failures = list(Failure.objects.filter(indexed_at__isnull=True, analysed_at__lt=cutoff).values_list("pk", flat=True)[:5000])
    for start in range(0, len(failures), 500):
        index_failures.delay(failures[start:start + 500])
    return f"requeued {len(jobs)} jobs, {len(failures)} failures for indexing"
