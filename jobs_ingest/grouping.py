"""Where the grouping rules meet the analysis: the signature each analysed job goes to, when a person's
rule (jobs_ingest.models.GroupingRule) says so. Two queries per batch, whatever its size."""
from __future__ import annotations

from django.db.models import Q

from jobs_ingest.core.grouping_rules import Rule, choose
from jobs_ingest.models import GroupingRule, Signature


def signatures_by_rule(analyses: dict, signatures: dict) -> dict[int, tuple[Signature, GroupingRule | None]]:
    """Each job's (signature, rule): its fingerprint's signature (`signatures`, keyed by (fingerprint,
    normaliser_version)) unless an active merge or split rule of that fingerprint sends it elsewhere."""
    query = Q()
    for key in {(a.fingerprint, a.normaliser_version) for a in analyses.values()}:
        query |= Q(fingerprint=key[0], normaliser_version=key[1])
    rules: dict[tuple[str, str], list[GroupingRule]] = {}
    for row in (GroupingRule.objects.filter(query, active=True,
                                            kind__in=[GroupingRule.Kind.MERGE, GroupingRule.Kind.SPLIT])
                .select_related("target")):
        rules.setdefault((row.fingerprint, row.normaliser_version), []).append(row)
    chosen = {}
    for job_id, analysis in analyses.items():
        key = (analysis.fingerprint, analysis.normaliser_version)
        rows = rules.get(key, [])
        rule = choose([Rule(r.pk, r.kind, r.contains, r.target_id) for r in rows],
                      analysis.failure_line or "", analysis.message or "") if rows else None
        row = next((r for r in rows if rule is not None and r.pk == rule.id), None)
        chosen[job_id] = (row.target, row) if row is not None else (signatures[key], None)
    return chosen


def enforce_clusters(signatures) -> None:
    """Signatures split out of an over-merged cluster stay in the cluster a person chose (latest rule)."""
    by_pk = {s.pk: s for s in signatures}
    chosen = dict(GroupingRule.objects.filter(kind=GroupingRule.Kind.CLUSTER, target_id__in=by_pk, active=True)
                  .order_by("pk").values_list("target_id", "cluster"))
    for pk, cluster in chosen.items():
        if by_pk[pk].cluster != cluster:
            Signature.objects.filter(pk=pk).update(cluster=cluster)
            by_pk[pk].cluster = cluster
