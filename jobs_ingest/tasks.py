"""Celery tasks: thin, idempotent shells around jobs_ingest.failures. They take ids, not objects.
The indexing task lives in jobs_ingest.search.tasks (under its old name, jobs_ingest.tasks.index_failures)."""
from datetime import timedelta

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from jobs_ingest import failures
from jobs_ingest.models import Failure, Job
from jobs_ingest.search import index, sync
from jobs_ingest.search.tasks import index_failures


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=8)
def analyse_job(job_id: int) -> str:
    try:
        failure = failures.analyse(job_id, index_now=True)
    except Job.DoesNotExist:
        return f"job {job_id} no longer exists"
    return f"job {job_id}: {failure.category if failure else 'no failure (job succeeded)'}"


@shared_task(acks_late=True)
def requeue_pending(older_than_seconds: int = 120) -> str:
    """Catch what a broker outage left behind: jobs stored but never analysed, failures never indexed."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    jobs = list(Job.objects.filter(ingest_state=Job.Ingest.QUEUED, updated_at__lt=cutoff).values_list("pk", flat=True)[:5000])
    for job_id in jobs:
        analyse_job.delay(job_id)
    if not index.health(sync.es_client()):
        # Indexing tasks already queued keep retrying; queueing more every beat would only pile up copies.
        return f"requeued {len(jobs)} jobs; Elasticsearch unavailable, indexing left to the retrying tasks"
    pending = list(Failure.objects.filter(indexed_at__isnull=True, analysed_at__lt=cutoff).values_list("pk", flat=True)[:5000])
    for start in range(0, len(pending), 500):
        index_failures.delay(pending[start:start + 500])
    return f"requeued {len(jobs)} jobs, {len(pending)} failures for indexing"
