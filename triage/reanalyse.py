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
from jobs_ingest.models import Failure, Job, Signature
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

    def lines(self, dry_run: bool) -> list[str]:
        verb = "would move" if dry_run else "moved"
        out = [f"{self.jobs} failed jobs, {self.analysed} analysed, {self.unreadable} with an unreadable log",
               f"{self.moved} failures {verb} to another signature ({len(self.moves)} moves between signatures), "
               f"{self.recategorised} with another automatic category",
               f"{len(self.carried)} judgments {'would be ' if dry_run else ''}carried to new signatures, "
               f"{len(self.conflicts)} left where the new signature had its own"]
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
    for start in range(0, len(ids), BATCH):
        batch = ids[start:start + BATCH]
        before = {f.job_id: f for f in Failure.objects.filter(job_id__in=batch).select_related("signature", "job")}
        after = _dry(before) if dry_run else _real(batch, summary)
        for job_id, (signature_id, category) in after.items():
            old = before.get(job_id)
            if old is None:
                continue
            summary.analysed += 1
            summary.recategorised += category != old.category
            if signature_id != old.signature_id:
                summary.moved += 1
                summary.moves[(old.signature_id, signature_id)] += 1
        if not dry_run:
            _carry_judgments(summary.moves, summary)
        if progress is not None:
            progress.advance(len(batch))
    if dry_run:
        _count_carries(summary)
    return summary


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
