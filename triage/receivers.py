"""What triage does when jobs_ingest has analysed a batch of failures (its `failures_analysed` signal, sent
inside the analysis transaction). One receiver, so the order of the steps is written here rather than left
to the order in which receivers happened to be connected."""
from __future__ import annotations

from django.conf import settings

from triage import alerts, nodes, rollups, services
from triage.models import ClusterTriage, SignatureTriage


def on_failures_analysed(sender, failures, new_to_signature, **kwargs) -> None:
    # 1. A resolved signature failing again regresses (its state only: no counted label changes).
    resolved = set(SignatureTriage.objects.filter(signature_id__in={f.signature_id for f in failures},
                                                  state=SignatureTriage.State.RESOLVED).values_list("pk", flat=True))
    for failure in failures:
        if failure.signature_id in resolved:
            services.mark_regression(failure, failure.signature, new_to_signature[failure.pk])
    # 2. Then the rollups count the batch's failures with the labels they have now (set-based, once).
    rollups.refresh_failures([f.pk for f in failures])
    # 3. Alerts look at the signatures after commit, off the ingest path (one task per transaction).
    for signature_id in sorted({f.signature_id for f in failures}):
        alerts.schedule_check(signature_id)
    # 4. A signature of a judged cluster takes the cluster's judgment until judged itself (#17).
    signatures = {f.signature_id: f.signature for f in failures}
    clusters = {s.cluster for s in signatures.values() if s.cluster}
    judged = set(ClusterTriage.objects.filter(cluster__in=clusters).exclude(category="")
                 .values_list("cluster", flat=True)) if clusters else set()
    for signature in signatures.values():
        if signature.cluster in judged:
            services.apply_cluster_judgment(signature)
    # 5. Optionally, a signature nobody owns goes to the failing job's team (#17).
    if settings.JOBTRIAGE_AUTO_ASSIGN_BY_TEAM:
        for failure in failures:
            services.auto_assign(failure.signature, failure.job.team)
    # 6. A node the batch's platform failures blame may cross the suspect threshold (#15).
    nodes.check_suspects(failures)
