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
# Alerts (issue #17): triage/alerts.py decides; these run it off the ingest path.
@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=5, max_retries=5)
def check_alerts(signature_ids: list[int]) -> str:
    from triage import alerts
    created = alerts.fan_out(alerts.signature_triggers(signature_ids))
    return f"{len(created)} alert(s) for {len(signature_ids)} signature(s)"


@shared_task(bind=True, acks_late=True, autoretry_for=(OperationalError,), retry_backoff=5, max_retries=None)
def deliver_alert(self, delivery_id: int) -> str:
    """One attempt; on a retryable error the task comes back after the row's backoff, until the row gives
    up after JOBTRIAGE_ALERT_MAX_ATTEMPTS. A redelivered task finds the row sent and does nothing."""
    from triage import alerts
    state, wait = alerts.attempt(delivery_id)
    if wait is not None:
        raise self.retry(countdown=wait, max_retries=None)
    return f"alert delivery {delivery_id}: {state}"


@shared_task(acks_late=True)
def retry_pending_alerts() -> str:
    """Beat: queue deliveries left pending (broker down when they were made, or a retry lost)."""
    from datetime import timedelta

    from django.utils import timezone

    from triage.models import AlertDelivery
    due = AlertDelivery.objects.filter(state=AlertDelivery.State.PENDING).exclude(next_attempt_at__gt=timezone.now())
    ids = list(due.filter(created_at__lt=timezone.now() - timedelta(minutes=5)).values_list("pk", flat=True)[:1000])
    for pk in ids:
        deliver_alert.delay(pk)
    return f"{len(ids)} pending alert(s) queued"
