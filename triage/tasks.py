"""Push judgments to Elasticsearch after they are committed to PostgreSQL."""
from celery import shared_task
from django.db import OperationalError

from jobs_ingest.models import Failure
from jobs_ingest.search.index import IndexingError
from jobs_ingest.search.sync import index_failures, index_signatures

CHUNK = 500


@shared_task(acks_late=True, autoretry_for=(IndexingError, OperationalError), retry_backoff=5,
             retry_backoff_max=600, max_retries=None)
def push_signatures(signature_ids: list[int]) -> str:
    # The signature documents first (one small request): similar-failure search reads the judgment
    # from them, and a signature may have thousands of failures to re-index after it.
    signatures = index_signatures(signature_ids)
    ids = list(Failure.objects.filter(signature_id__in=signature_ids).values_list("pk", flat=True))
    done = 0
    for start in range(0, len(ids), CHUNK):
        done += index_failures(ids[start:start + CHUNK])
    return f"{signatures} signature documents and {done} failures of {len(signature_ids)} signatures re-indexed"


# Weekly failure reports (issue #5): the beat entry "weekly-reports" in settings calls this on Monday morning.
@shared_task(acks_late=True, autoretry_for=(OSError, OperationalError), retry_backoff=60, retry_backoff_max=3600,
             max_retries=5)
def send_weekly_reports(week: str | None = None) -> str:
    """Email each team its report for `week` (default: the last complete ISO week). A team whose report
    was already sent for that week is skipped, so a redelivered task does not send twice."""
    import logging

    from triage import report_email, reports
    log = logging.getLogger("triage.reports")
    summary = report_email.send_team_reports(reports.Week.parse(week) if week else None, once=True)
    log.info("weekly reports: %s", summary)
    return summary


# Comment mentions (#17): the SMTP errors are OSErrors; retried with backoff. Sent once per comment.
@shared_task(acks_late=True, autoretry_for=(OSError, OperationalError), retry_backoff=30, retry_backoff_max=1800,
             max_retries=8)
def send_mention_emails(comment_id: int) -> str:
    from triage.comments import send_mentions
    return f"{send_mentions(comment_id)} mention emails for comment {comment_id}"
