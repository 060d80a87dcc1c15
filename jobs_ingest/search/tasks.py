"""The indexing task and how to queue it. Here, not in jobs_ingest.tasks, so that ingestion can queue
indexing without importing the module whose tasks import ingestion (no import circle)."""
import logging

from celery import shared_task
from django.db import OperationalError

from jobs_ingest.search import sync
from jobs_ingest.search.index import IndexingError

log = logging.getLogger(__name__)


# The name it always had: tasks already queued under it keep running across an upgrade.
@shared_task(name="jobs_ingest.tasks.index_failures", acks_late=True, autoretry_for=(IndexingError, OperationalError),
             retry_backoff=5, retry_backoff_max=600, max_retries=30)
def index_failures(failure_ids: list[int], signature_ids: list[int] | None = None) -> str:
    """Elasticsearch down or slow: retry with backoff for about four hours; the database holds the truth
    and, after that, requeue_pending sends whatever is still unindexed once Elasticsearch answers again.
    signature_ids: signatures whose documents are recounted too (one that a failure moved out of)."""
    done = sync.index_failures(failure_ids, signature_ids=signature_ids)
    return f"{done} failures indexed" + (f", signatures {signature_ids} recounted" if signature_ids else "")


def enqueue_indexing(failure_ids: list[int], signature_ids: list[int] | None = None) -> None:
    try:
        if signature_ids:
            index_failures.delay(failure_ids, signature_ids)
        else:
            index_failures.delay(failure_ids)
    except Exception as exc:
        log.warning("failures %s not queued for indexing (%s); `reindex --pending` will index them", failure_ids, exc)
