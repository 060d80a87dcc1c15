"""A new sacct report of a job already stored, merged so that re-ingesting never flips what was known
(pure; no Django). slurmctld restarts rewrite recently finished jobs, and a report without -D lacks
earlier runs; see docs/platforms/slurm.md."""
from __future__ import annotations

from datetime import datetime

from ..jobspec import parse_time

# Facts of a finished run that sacct can later report differently: a restart of slurmctld rewrites
# jobs that ended within MinJobAge ('CANCELLED by 1001|0:0' becomes 'CANCELLED|0:15', 'TIMEOUT|0:0'
# becomes 'TIMEOUT|0:15'). Each group is kept or replaced as a whole.
STATE_FACTS = ("status", "slurm_state", "cancelled_by", "cancelled_by_uid")
EXIT_FACTS = ("exit_code", "signal")
LATER_REPORTS_KEPT = 10


def _instant(value):
    if value in (None, ""):
        return None
    try:
        return parse_time(value) if not isinstance(value, datetime) else value
    except ValueError:
        return None


def keep_known_facts(stored: dict, incoming: dict) -> tuple[dict, dict | None]:
    """Merge a new report of a job (`incoming`, the metadata `_job` builds) into what is stored
    (`stored`: the same keys, times as datetimes or ISO text, extra fields at the top level).

    - Same last run (its attempt starts at the same instant): the state and the exit status already
      stored are kept; a report that differs is appended to `slurm_later_reports` (and returned).
    - A fact the report lacks (no exit code from 22.05's JSON, no SubmitLine) keeps its stored value.
    - Attempts stored earlier than the report's first (a report without sacct -D) are kept.
    - A new run (requeued after it was stored): the report's facts win.
    Returns (metadata to store, the later report that differed or None)."""
    merged = dict(incoming)
    run_facts = {"attempts", "slurm_later_reports", "exit_code_unknown", "requeues_without_times",
                 *STATE_FACTS, *EXIT_FACTS}
    for key, value in stored.items():   # what the report does not say stays as it was
        if key not in run_facts and merged.get(key) in (None, "") and value not in (None, ""):
            merged[key] = value
    stored_attempts = [a for a in stored.get("attempts") or [] if _instant(a.get("started_at"))]
    attempts = [dict(a) for a in incoming.get("attempts") or []]
    by_start = {_instant(a.get("started_at")): a for a in stored_attempts}
    for attempt in attempts:
        known = by_start.get(_instant(attempt.get("started_at")))
        if known is not None:
            for key in ("exit_code", "status"):
                if known.get(key) not in (None, ""):
                    attempt[key] = known[key]   # a finished run's outcome does not change
    first = min((t for t in (_instant(a.get("started_at")) for a in attempts) if t), default=None)
    earlier = [dict(a) for a in stored_attempts if first is None or _instant(a["started_at"]) < first]
    if earlier and first is not None:
        attempts = earlier + attempts
        merged["started_at"] = earlier[0]["started_at"]
        if merged.get("requeues_without_times"):
            unseen = merged["requeues_without_times"] - len(earlier)
            merged["requeues_without_times"] = unseen if unseen > 0 else None
    if attempts:
        merged["attempts"] = attempts
    submitted = [t for t in (stored.get("submitted_at"), incoming.get("submitted_at")) if _instant(t)]
    if submitted:
        merged["submitted_at"] = min(submitted, key=_instant)

    later, reports = None, list(stored.get("slurm_later_reports") or [])
    last_stored = stored_attempts[-1] if stored_attempts else None
    last_new = (incoming.get("attempts") or [None])[-1]
    same_run = (last_stored is not None and last_new is not None
                and _instant(last_stored.get("started_at")) == _instant(last_new.get("started_at")))
    if same_run:
        report = {}
        for group, known in ((STATE_FACTS, stored.get("slurm_state")),
                             (EXIT_FACTS, stored.get("exit_code") is not None or stored.get("signal"))):
            if not known:
                continue   # nothing was known: the report's values stand
            kept = {k: stored.get(k) if k == "exit_code" else stored.get(k) or None for k in group}
            said = {k: incoming.get(k) if k == "exit_code" else incoming.get(k) or None for k in group}
            merged.update(kept)
            # A report that does not know the facts (22.05's JSON exit codes) is not a different report.
            if said != kept and any(v is not None for v in said.values()):
                report.update(said)
        if report:
            later = report
            if report not in reports:
                reports = (reports + [report])[-LATER_REPORTS_KEPT:]
    if reports:   # kept across runs: they tell how an earlier run's record changed
        merged["slurm_later_reports"] = reports
    if merged.get("exit_code") is not None or merged.get("signal"):
        merged.pop("exit_code_unknown", None)
    return {k: v for k, v in merged.items() if v not in (None, "")}, later
