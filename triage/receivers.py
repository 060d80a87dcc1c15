"""What triage does when jobs_ingest has analysed a failure (its `failure_analysed` signal, sent inside
the analysis transaction). One receiver, so the order of the steps is written here rather than left to
the order in which receivers happened to be connected."""
from __future__ import annotations

from django.conf import settings

from triage import rollups, services


def on_failure_analysed(sender, failure, signature, new_to_signature, **kwargs) -> None:
    # 1. A resolved signature failing again regresses (its state only: no counted label changes).
    services.mark_regression(failure, signature, new_to_signature)
    # 2. Then the rollups count the failure with the labels it has now.
    rollups.refresh_failures([failure.pk])
    # 3. A signature of a judged cluster takes the cluster's judgment until judged itself (#17).
    if signature.cluster:
        services.apply_cluster_judgment(signature)
    # 4. Optionally, a signature nobody owns goes to the failing job's team (#17).
    if settings.JOBTRIAGE_AUTO_ASSIGN_BY_TEAM:
        services.auto_assign(signature, failure.job.team)
