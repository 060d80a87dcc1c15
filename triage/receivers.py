"""What triage does when jobs_ingest has analysed a failure (its `failure_analysed` signal, sent inside
the analysis transaction). One receiver, so the order of the steps is written here rather than left to
the order in which receivers happened to be connected."""
from __future__ import annotations

from triage import alerts, rollups, services


def on_failure_analysed(sender, failure, signature, new_to_signature, **kwargs) -> None:
    # 1. A resolved signature failing again regresses (its state only: no counted label changes).
    services.mark_regression(failure, signature, new_to_signature)
    # 2. Then the rollups count the failure with the labels it has now.
    rollups.refresh_failures([failure.pk])
    # 3. Alerts look at the signature after commit, off the ingest path (one task per transaction).
    alerts.schedule_check(signature.pk)
