"""Celery tasks: thin, idempotent shells around jobs_ingest.failures. They take ids, not objects.
The indexing task lives in jobs_ingest.search.tasks (under its old name, jobs_ingest.tasks.index_failures).

Analysis runs in batches (issue #16). Receiving a job pushes its id onto a Redis list beside the broker's
queue (`enqueue_analysis`); the first push of a quiet moment schedules `drain_analysis` a short wait later
(JOBTRIAGE_BATCH_WAIT), which pops up to JOBTRIAGE_BATCH_SIZE ids and sends them as one durable
`analyse_jobs` message (acks_late: a killed worker's batch is redelivered). If ids remain, it drains again
at once, so a burst becomes full batches and a trickle becomes small ones within the wait.
Nothing is lost if a process dies between the pop and the send (a window of a few milliseconds): the job
is still QUEUED in PostgreSQL, and `requeue_pending` (beat) queues it again.
"""
import logging
from datetime import timedelta

import redis
from celery import shared_task
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from jobs_ingest import failures
from jobs_ingest.models import Failure, Job
from jobs_ingest.search import index, sync
from jobs_ingest.search.tasks import index_failures

log = logging.getLogger(__name__)
_clients: dict[str, redis.Redis] = {}


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=8)
def analyse_jobs(job_ids: list[int]) -> str:
    result = failures.analyse_batch(job_ids, index_now=True)
    return (f"{len(result.failures)} failures analysed, {len(result.succeeded)} succeeded jobs, "
            f"{len(result.unreadable)} unreadable logs, {len(result.missing)} jobs gone")


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=8)
def analyse_job(job_id: int) -> str:
    """One job (the name messages queued before batching carry)."""
    return analyse_jobs(job_ids=[job_id])


def _redis() -> redis.Redis:
    url = settings.CELERY_BROKER_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)
    return _clients[url]


def _buffer_key() -> str:
    # Per task queue: a test session's private queue has its own buffer, and so does its worker.
    return f"jobtriage:analysis-buffer:{analyse_jobs.app.conf.task_default_queue}"


def _schedule_drain(client: redis.Redis, key: str, countdown: float) -> None:
    # One drain at a time per key, but the flag expires: a drain that takes longer than that lets a
    # second worker drain the rest meanwhile.
    if client.set(key + ":scheduled", "1", nx=True, px=max(1000, int(2000 * settings.JOBTRIAGE_BATCH_WAIT))):
        drain_analysis.apply_async(args=[key], countdown=countdown)


def enqueue_analysis(job_ids: list[int]) -> None:
    """Queue stored jobs for analysis in batches. If Redis is down the jobs stay QUEUED and
    `requeue_pending` queues them later: an accepted job is never dropped."""
    if not job_ids:
        return
    if analyse_jobs.app.conf.task_always_eager:  # the zero-setup default runs tasks in-process
        analyse_jobs.apply(args=[list(job_ids)])
        return
    try:
        client, key = _redis(), _buffer_key()
        client.rpush(key, *job_ids)
        _schedule_drain(client, key, settings.JOBTRIAGE_BATCH_WAIT)
    except Exception as exc:  # noqa: BLE001 -- redis and kombu raise several types for an unreachable broker
        log.warning("%d jobs stored but not queued (broker unavailable: %s); requeue_pending will retry",
                    len(job_ids), exc)


@shared_task(acks_late=True)
def drain_analysis(key: str) -> str:
    client = _redis()
    client.delete(key + ":scheduled")
    ids = [int(i) for i in client.lpop(key, settings.JOBTRIAGE_BATCH_SIZE) or []]
    if ids:
        analyse_jobs.delay(ids)
    if client.llen(key):
        _schedule_drain(client, key, 0)
    return f"{len(ids)} jobs sent for analysis"


@shared_task(acks_late=True)
def requeue_pending(older_than_seconds: int = 120) -> str:
    """Catch what a broker outage left behind: jobs stored but never analysed, failures never indexed."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    jobs = list(Job.objects.filter(ingest_state=Job.Ingest.QUEUED, updated_at__lt=cutoff).values_list("pk", flat=True)[:5000])
    for start in range(0, len(jobs), settings.JOBTRIAGE_BATCH_SIZE):
        analyse_jobs.delay(jobs[start:start + settings.JOBTRIAGE_BATCH_SIZE])
    if not index.health(sync.es_client()):
        # Indexing tasks already queued keep retrying; queueing more every beat would only pile up copies.
        return f"requeued {len(jobs)} jobs; Elasticsearch unavailable, indexing left to the retrying tasks"
    pending = list(Failure.objects.filter(indexed_at__isnull=True, analysed_at__lt=cutoff).values_list("pk", flat=True)[:5000])
    for start in range(0, len(pending), 500):
        index_failures.delay(pending[start:start + 500])
    return f"requeued {len(jobs)} jobs, {len(pending)} failures for indexing"
