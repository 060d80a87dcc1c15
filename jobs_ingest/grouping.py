"""Where the grouping rules meet the analysis: the signature a new analysis goes to, when a person's
rule (jobs_ingest.models.GroupingRule) says so. One indexed query per analysis."""
from __future__ import annotations

from jobs_ingest.core.grouping_rules import Rule, choose
from jobs_ingest.models import GroupingRule, Signature


def enforce_cluster(signature: Signature) -> None:
    """A signature split out of an over-merged cluster stays in the cluster a person chose."""
    chosen = (GroupingRule.objects.filter(kind=GroupingRule.Kind.CLUSTER, target=signature, active=True)
              .order_by("-pk").values_list("cluster", flat=True).first())
    if chosen is not None and signature.cluster != chosen:
        Signature.objects.filter(pk=signature.pk).update(cluster=chosen)
        signature.cluster = chosen


def signature_by_rule(analysis) -> tuple[Signature, GroupingRule] | None:
    rows = list(GroupingRule.objects.filter(kind__in=[GroupingRule.Kind.MERGE, GroupingRule.Kind.SPLIT],
                                            fingerprint=analysis.fingerprint,
                                            normaliser_version=analysis.normaliser_version, active=True))
    if not rows:
        return None
    rule = choose([Rule(r.pk, r.kind, r.contains, r.target_id) for r in rows],
                  analysis.failure_line or "", analysis.message or "")
    if rule is None:
        return None
    chosen = next(r for r in rows if r.pk == rule.id)
    return Signature.objects.get(pk=chosen.target_id), chosen
