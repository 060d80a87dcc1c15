"""A way through version bumps (#14.6): re-run the analysis of stored jobs from their stored logs, in
batches, and let people's judgments follow their failures to their new signatures.

When a new grouping or tagging config is released, stored failures keep the signatures their old
analysis gave them. `manage.py reanalyse` re-analyses them with the current configs through the worker's
own batch code (jobs_ingest.failures.analyse_batch). A failure whose signature changes moves; if its old
signature was judged and the new one is not, the new one takes the old judgment (category, root cause,
notes, fix, state), and every carried value is written to the new signature's history with where it came
from. A new signature already judged keeps its own judgment (reported as a conflict).
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction

from jobs_ingest import failures
from jobs_ingest.core import analyse_log, analyse_text
from jobs_ingest.jobspec import SUCCESS_STATUSES
from jobs_ingest.grouping import enforce_clusters
from jobs_ingest.models import Failure, GroupingRule, Job, Signature
from triage.models import JudgmentEvent, SignatureTriage
from triage.services import JUDGED_FIELDS, push_signatures_on_commit

BATCH = 200
# What follows a failure to its new signature: the judgment, its state, the fix link, owner and issue.
CARRIED = (*JUDGED_FIELDS, "state", "fixed_by_id", "issue_url", "owner_user_id", "owner_team_id")


@dataclass
class Summary:
    jobs: int = 0
    analysed: int = 0
    unreadable: int = 0
    moved: int = 0
    recategorised: int = 0
    moves: collections.Counter = field(default_factory=collections.Counter)  # (old sig, new sig) -> failures
    carried: list[tuple[int, int]] = field(default_factory=list)            # judgments old -> new
    conflicts: list[tuple[int, int]] = field(default_factory=list)          # both judged: new kept its own
    rules_carried: list[tuple[int, int]] = field(default_factory=list)      # grouping rules old -> new copy

    def lines(self, dry_run: bool) -> list[str]:
        verb = "would move" if dry_run else "moved"
        out = [f"{self.jobs} failed jobs, {self.analysed} analysed, {self.unreadable} with an unreadable log",
               f"{self.moved} failures {verb} to another signature ({len(self.moves)} moves between signatures), "
               f"{self.recategorised} with another automatic category",
               f"{len(self.carried)} judgments {'would be ' if dry_run else ''}carried to new signatures, "
               f"{len(self.conflicts)} left where the new signature had its own",
               f"{len(self.rules_carried)} grouping rules (merges, splits, cluster splits) "
               f"{'would be ' if dry_run else ''}carried to the new fingerprints"]
        for (old, new), count in self.moves.most_common(20):
            out.append(f"  signature {old} -> {new}: {count} failures")
        return out


def jobs_to_reanalyse(since: datetime | None = None):
    jobs = Job.objects.exclude(status__in=SUCCESS_STATUSES).exclude(status="").filter(failure__isnull=False)
    if since is not None:
        jobs = jobs.filter(received_at__gte=since)
    return jobs.order_by("pk").values_list("pk", flat=True)


def reanalyse(job_ids, *, dry_run: bool = False, progress=None) -> Summary:
    summary = Summary()
    ids = list(job_ids)
    summary.jobs = len(ids)
    placed = RulePlacements()
    for start in range(0, len(ids), BATCH):
        batch = ids[start:start + BATCH]
        before = {f.job_id: f for f in Failure.objects.filter(job_id__in=batch)
                  .select_related("signature", "job", "grouping_rule")}
        after = _dry(before) if dry_run else _real(batch, summary)
        for job_id, (signature_id, category) in after.items():
            old = before.get(job_id)
            if old is None:
                continue
            summary.analysed += 1
            summary.recategorised += category != old.category
            if placed.lost(old, signature_id, dry_run):
                continue  # counted once its rule is carried and it has followed it
            if old.grouping_rule_id is None:  # where a signature's own failures go says where the signature is now
                placed.automatic[old.signature_id][signature_id] += 1
            if signature_id != old.signature_id:
                summary.moved += 1
                summary.moves[(old.signature_id, signature_id)] += 1
        if not dry_run:
            _carry_judgments(summary.moves, summary)
        if progress is not None:
            progress.advance(len(batch))
    if dry_run:
        summary.rules_carried = [(rule.pk, -1) for rule in placed.rules_to_carry()] + [
            (rule.pk, -1) for rule in _cluster_splits(placed) if placed.where(rule.target_id) != rule.target_id]
        _count_carries(summary)
    else:
        _carry_rules(placed, summary)
    return summary


@dataclass
class RulePlacements:
    """Failures a person's rule had placed, and where each signature's own failures went."""
    # old signature -> new signature -> failures placed automatically (by their fingerprint)
    automatic: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    # rule -> (job ids, their old signature) that the rule placed and no longer matches
    lost_by_rule: dict = field(default_factory=dict)
    rules: dict = field(default_factory=dict)

    def lost(self, old: Failure, signature_id: int, dry_run: bool) -> bool:
        rule = old.grouping_rule
        if rule is None or not rule.active or rule.kind == GroupingRule.Kind.CLUSTER:
            return False
        if dry_run:
            current = Signature.objects.filter(pk=signature_id).values_list("normaliser_version", flat=True).first()
            if current == rule.normaliser_version:
                return False
        else:
            now = Failure.objects.filter(job_id=old.job_id).values_list("grouping_rule_id", flat=True).first()
            if now == rule.pk:
                return False  # the rule still matches it
        self.rules[rule.pk] = rule
        self.lost_by_rule.setdefault(rule.pk, ([], old.signature_id))[0].append(old.job_id)
        return True

    def rules_to_carry(self) -> list[GroupingRule]:
        return [self.rules[pk] for pk in sorted(self.lost_by_rule)]

    def where(self, signature_id: int) -> int:
        """Where a signature is now: the signature most of its own failures moved to (itself if none moved)."""
        moved = self.automatic.get(signature_id)
        return moved.most_common(1)[0][0] if moved else signature_id


def _carry_rules(placed: RulePlacements, summary: Summary) -> None:
    """Copy each rule that lost its failures to their new fingerprints, then let them follow it."""
    followers: list[tuple[int, int]] = []  # (job id, old signature)
    for rule in placed.rules_to_carry():
        job_ids, old_signature = placed.lost_by_rule[rule.pk]
        target = placed.where(rule.target_id)
        new_keys = set(Failure.objects.filter(job_id__in=job_ids)
                       .values_list("signature__fingerprint", "signature__normaliser_version"))
        with transaction.atomic():
            for fingerprint, version in sorted(new_keys):
                copy, made = GroupingRule.objects.get_or_create(
                    kind=rule.kind, fingerprint=fingerprint, normaliser_version=version, contains=rule.contains,
                    target_id=target, active=True,
                    defaults={"note": f"carried from rule {rule.pk} by reanalyse" + (f": {rule.note}" if rule.note else ""),
                              "created_by": rule.created_by})
                if made:
                    summary.rules_carried.append((rule.pk, copy.pk))
                    JudgmentEvent.objects.create(signature_id=target, user=None, field=f"{rule.kind} rule carried",
                                                 old_value=f"rule {rule.pk} ({rule.normaliser_version})",
                                                 new_value=f"rule {copy.pk} ({version}, reanalyse)")
        followers += [(job_id, old_signature) for job_id in job_ids]
    if followers:
        result = failures.analyse_batch([job_id for job_id, _ in followers])
        for job_id, old_signature in followers:
            failure = result.failures.get(job_id)
            if failure is None:
                continue
            if failure.signature_id != old_signature:
                summary.moved += 1
                summary.moves[(old_signature, failure.signature_id)] += 1
        _carry_judgments(summary.moves, summary)
    _carry_cluster_splits(placed, summary)


def _cluster_splits(placed: RulePlacements):
    return GroupingRule.objects.filter(kind=GroupingRule.Kind.CLUSTER, active=True,
                                       target_id__in=list(placed.automatic)).order_by("pk")


def _carry_cluster_splits(placed: RulePlacements, summary: Summary) -> None:
    """A signature a person split out of a cluster keeps that cluster where its failures moved."""
    moved_to = []
    for rule in _cluster_splits(placed):
        target = placed.where(rule.target_id)
        if target == rule.target_id:
            continue
        new = Signature.objects.get(pk=target)
        copy, made = GroupingRule.objects.get_or_create(
            kind=rule.kind, fingerprint=new.fingerprint, normaliser_version=new.normaliser_version, target=new,
            cluster=rule.cluster, active=True,
            defaults={"note": f"carried from rule {rule.pk} by reanalyse", "created_by": rule.created_by})
        if made:
            summary.rules_carried.append((rule.pk, copy.pk))
            JudgmentEvent.objects.create(signature_id=target, user=None, field="cluster rule carried",
                                         old_value=f"rule {rule.pk}", new_value=f"rule {copy.pk} (reanalyse)")
            moved_to.append(new)
    if moved_to:
        enforce_clusters(moved_to)
        push_signatures_on_commit([s.pk for s in moved_to])


def _real(batch: list[int], summary: Summary) -> dict[int, tuple[int | None, str]]:
    result = failures.analyse_batch(batch)
    summary.unreadable += len(result.unreadable)
    return {job_id: (f.signature_id, f.category) for job_id, f in result.failures.items()}


def _dry(before: dict[int, Failure]) -> dict[int, tuple[int, str]]:
    """What the current configs would say, without writing: the signature that the new fingerprint names
    (-1 when it does not exist yet: a new signature would be made). Grouping rules are not applied."""
    out = {}
    for job_id, failure in before.items():
        job = failure.job
        try:
            path = Path(settings.JOBTRIAGE_LOG_DIR) / job.log_path if job.log_path else None
            analysis = (analyse_log(path, exit_code=job.exit_code, signal=job.signal or None) if path
                        else analyse_text("", exit_code=job.exit_code, signal=job.signal or None))
        except OSError:
            continue
        signature = Signature.objects.filter(fingerprint=analysis.fingerprint,
                                             normaliser_version=analysis.normaliser_version).values_list("pk", flat=True)
        out[job_id] = (signature.first() or -1, analysis.category)
    return out


def _judged(signature_ids) -> dict[int, SignatureTriage]:
    return {t.signature_id: t for t in SignatureTriage.objects.filter(signature_id__in=signature_ids)
            if any(getattr(t, f) for f in JUDGED_FIELDS)}


def _count_carries(summary: Summary) -> None:
    judged = _judged({s for pair in summary.moves for s in pair})
    for old, new in summary.moves:
        if old in judged:
            (summary.conflicts if new in judged else summary.carried).append((old, new))


def _carry_judgments(pairs, summary: Summary) -> None:
    done = set(summary.carried) | set(summary.conflicts)
    pairs = sorted(set(pairs) - done)
    if not pairs:
        return
    judged = _judged({s for pair in pairs for s in pair})
    for old, new in pairs:
        source = judged.get(old)
        if source is None:
            continue
        if new in judged:
            summary.conflicts.append((old, new))
            continue
        with transaction.atomic():
            target, _ = SignatureTriage.objects.select_for_update().get_or_create(signature_id=new)
            for name in (*CARRIED, "resolved_at", "triaged_at"):
                value = getattr(source, name)
                if getattr(target, name) != value and name in CARRIED:
                    JudgmentEvent.objects.create(
                        signature_id=new, user=None, field=name[:32], old_value=str(getattr(target, name) or ""),
                        new_value=str(value or ""))
                setattr(target, name, value)
            target.updated_by = source.updated_by
            target.save()
            JudgmentEvent.objects.create(signature_id=new, user=None, field="carried from",
                                         old_value="", new_value=f"signature {old} (reanalyse)")
            JudgmentEvent.objects.create(signature_id=old, user=None, field="carried to",
                                         old_value="", new_value=f"signature {new} (reanalyse)")
            push_signatures_on_commit([new])
        judged[new] = target
        summary.carried.append((old, new))
