"""Where the grouping rules meet the analysis: the signature a new analysis goes to, when a person's
rule (jobs_ingest.models.GroupingRule) says so. One indexed query per analysis."""
from __future__ import annotations

from jobs_ingest.core.grouping_rules import Rule, choose
from jobs_ingest.models import GroupingRule, Signature


def signature_by_rule(analysis) -> tuple[Signature, GroupingRule] | None:
    rows = list(GroupingRule.objects.filter(fingerprint=analysis.fingerprint,
                                            normaliser_version=analysis.normaliser_version, active=True))
    if not rows:
        return None
    rule = choose([Rule(r.pk, r.kind, r.contains, r.target_id) for r in rows],
                  analysis.failure_line or "", analysis.message or "")
    if rule is None:
        return None
    chosen = next(r for r in rows if r.pk == rule.id)
    return Signature.objects.get(pk=chosen.target_id), chosen
