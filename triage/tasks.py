"""Push judgments to Elasticsearch after they are committed to PostgreSQL."""
from celery import shared_task
from django.db import OperationalError

from jobs_ingest import services as ingest
from jobs_ingest.models import Failure
from jobs_ingest.search_index import IndexingError

CHUNK = 500


@shared_task(acks_late=True, autoretry_for=(IndexingError, OperationalError), retry_backoff=5,
             retry_backoff_max=600, max_retries=None)
def push_signatures(signature_ids: list[int]) -> str:
    ids = list(Failure.objects.filter(signature_id__in=signature_ids).values_list("pk", flat=True))
    done = 0
    for start in range(0, len(ids), CHUNK):
        done += ingest.index_failures(ids[start:start + CHUNK])
    return f"{done} failures of {len(signature_ids)} signatures re-indexed"
