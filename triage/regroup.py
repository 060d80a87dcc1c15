"""Merge and split signatures (#17): an engineer corrects the grouping with a rule that jobs_ingest applies
at every analysis (jobs_ingest/grouping.py), then the affected jobs are re-analysed so that existing
failures follow it too (counters, teams, rollups and the search index are updated by the analysis
itself). History: a JudgmentEvent on each signature involved, and the rule row (who, when, note)."""
from __future__ import annotations

import hashlib

from django.db import transaction
from django.db.models import Q

from jobs_ingest import failures as analysis
from jobs_ingest.models import Failure, GroupingRule, Signature
from triage.models import JudgmentEvent

# Re-analysed in the request up to this many jobs; beyond, by the workers (the page says so).
INLINE_JOBS = 300


class RegroupError(ValueError):
    pass


def _record(signature_id, user, field, old, new) -> None:
    JudgmentEvent.objects.create(signature_id=signature_id, user=user, field=field, old_value=str(old),
                                 new_value=str(new))


def _origins(signature: Signature) -> set[tuple[str, str]]:
    """The automatic (fingerprint, normaliser version) pairs whose failures this signature holds."""
    return {(signature.fingerprint, signature.normaliser_version),
            *GroupingRule.objects.filter(target=signature, active=True).values_list("fingerprint", "normaliser_version")}


def reanalyse(job_ids: list[int]) -> int:
    """Re-analyse now (small sets) or queue the analysis tasks; returns how many were done now."""
    if len(job_ids) > INLINE_JOBS:
        from jobs_ingest.tasks import analyse_job
        for job_id in job_ids:
            transaction.on_commit(lambda j=job_id: analyse_job.delay(j))
        return 0
    for job_id in job_ids:
        analysis.analyse(job_id)
    return len(job_ids)


def merge(target: Signature, sources: list[Signature], user, note: str = "") -> int:
    """Send every failure of `sources`, now and later, to `target`. Returns the jobs re-analysed now."""
    sources = [s for s in sources if s.pk != target.pk]
    if not sources:
        raise RegroupError("choose at least two signatures to merge")
    with transaction.atomic():
        for source in sources:
            # Rules that sent failures to the source now send them to the target.
            GroupingRule.objects.filter(target=source, active=True).update(target=target)
            GroupingRule.objects.create(kind=GroupingRule.Kind.MERGE, fingerprint=source.fingerprint,
                                        normaliser_version=source.normaliser_version, target=target,
                                        note=note, created_by=user)
            _record(source.pk, user, "merged into", "", f"signature {target.pk}")
            _record(target.pk, user, "merged", "", f"signature {source.pk} ({source.fingerprint})")
        job_ids = list(Failure.objects.filter(signature__in=sources).values_list("job_id", flat=True))
    return reanalyse(job_ids)


def matching(signature: Signature, contains: str):
    """The failures a split on `contains` would move (as core/grouping_rules.choose decides)."""
    return signature.failures.filter(Q(failure_line__contains=contains) | Q(message__contains=contains))


def split(signature: Signature, contains: str, user, note: str = "") -> tuple[Signature, int]:
    """Move the failures of `signature` whose failure line or message contains `contains` (now and later)
    to a new signature. Returns it and the jobs re-analysed now."""
    contains = contains.strip()
    if not contains:
        raise RegroupError("give the text that tells the failures to split off")
    moving, total = matching(signature, contains).count(), signature.failures.count()
    if moving == 0:
        raise RegroupError(f"no failure of this signature contains {contains!r}")
    if moving == total:
        raise RegroupError(f"every failure ({total}) contains {contains!r}: nothing would stay; split on a narrower text")
    with transaction.atomic():
        digest = hashlib.sha256(f"{signature.fingerprint}|split|{contains}".encode()).hexdigest()[:16]
        new, _ = Signature.objects.get_or_create(
            fingerprint=digest, normaliser_version=signature.normaliser_version,
            defaults={"exception_type": signature.exception_type,
                      "masked_message": f"{signature.masked_message} [split: {contains}]"[:10_000],
                      "category": signature.category, "confidence": signature.confidence,
                      "cluster": signature.cluster, "cluster_message": signature.cluster_message})
        for fingerprint, version in _origins(signature):
            GroupingRule.objects.create(kind=GroupingRule.Kind.SPLIT, fingerprint=fingerprint,
                                        normaliser_version=version, contains=contains, target=new, note=note,
                                        created_by=user)
        _record(signature.pk, user, "split off", "", f"signature {new.pk}: failures containing {contains!r}")
        _record(new.pk, user, "split from", "", f"signature {signature.pk} ({signature.fingerprint})")
        job_ids = list(matching(signature, contains).values_list("job_id", flat=True))
    return new, reanalyse(job_ids)


def split_cluster(cluster: str, signatures: list[Signature], user, note: str = "") -> str:
    """Move some signatures of an over-merged cluster into a cluster of their own, for good: a rule keeps
    each of them there whatever the automatic clustering computes (jobs_ingest/grouping.enforce_cluster).
    Returns the new cluster's key."""
    members = set(Signature.objects.filter(cluster=cluster).values_list("pk", flat=True))
    moving = [s for s in signatures if s.pk in members]
    if not moving:
        raise RegroupError("select the signatures to move out of this cluster")
    if len(moving) == len(members):
        raise RegroupError("every signature would move: leave at least one in this cluster")
    ids = sorted(s.pk for s in moving)
    key = "split-" + hashlib.sha256(f"{cluster}|{ids}".encode()).hexdigest()[:16]
    with transaction.atomic():
        for signature in moving:
            GroupingRule.objects.create(kind=GroupingRule.Kind.CLUSTER, fingerprint=signature.fingerprint,
                                        normaliser_version=signature.normaliser_version, target=signature,
                                        cluster=key, note=note, created_by=user)
            _record(signature.pk, user, "cluster", cluster, key)
        # The old cluster's message described what was over-merged: the new one is named after its biggest member.
        biggest = max(moving, key=lambda s: (s.gpu_seconds, -s.pk))
        Signature.objects.filter(pk__in=ids).update(cluster=key, cluster_message=biggest.masked_message)
    from jobs_ingest.search.tasks import enqueue_indexing
    transaction.on_commit(lambda: enqueue_indexing([], signature_ids=ids))
    return key
