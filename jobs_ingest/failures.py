"""Analyse stored jobs in batches: read their logs with the pure core, store their failures and signatures,
then index them. The step the Celery worker runs (jobs_ingest.tasks.analyse_jobs) after jobs were received.

PostgreSQL is written first and is the source of truth; Elasticsearch is fed afterwards, at once or
by a task queued on commit, and can always be rebuilt with `manage.py reindex`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, Greatest, Least
from django.utils import timezone

from jobs_ingest.core import analyse_log, analyse_text
from jobs_ingest.core.judged import is_unsure, refine
from jobs_ingest.core.logread import LogSource
from jobs_ingest.grouping import enforce_clusters, signatures_by_rule
from jobs_ingest.jobspec import SUCCESS_STATUSES
from jobs_ingest.models import Attempt, Failure, Job, Signature
from jobs_ingest.search.index import IndexingError
from jobs_ingest.search.neighbours import corrected_categories, judged_neighbours
from jobs_ingest.search.query import SearchUnavailable
from jobs_ingest.search.sync import es_client, index_failures
from jobs_ingest.search.tasks import enqueue_indexing
from jobs_ingest.signals import failures_analysed

log = logging.getLogger(__name__)


@dataclass
class BatchResult:
    """What one batch did, by job id."""
    failures: dict[int, Failure] = field(default_factory=dict)
    succeeded: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    unreadable: dict[int, OSError] = field(default_factory=dict)


def analyse(job_id: int, *, index_now: bool = False) -> Failure | None:
    """Analyse one stored job (a batch of one: the same code path as the worker's batches). Returns its
    failure, or None for a job that succeeded. Raises Job.DoesNotExist, or OSError for an unreadable log
    (the job is then marked ERROR)."""
    result = analyse_batch([job_id], index_now=index_now)
    if job_id in result.missing:
        raise Job.DoesNotExist(f"job {job_id} does not exist")
    if job_id in result.unreadable:
        raise result.unreadable[job_id]
    return result.failures.get(job_id)


def analyse_batch(job_ids, *, index_now: bool = False) -> BatchResult:
    """Analyse stored jobs' logs and store their failures and signatures. Safe to run twice on any job.

    The logs are read by the pure core first, outside any transaction; then one transaction writes the
    whole batch: failures upserted in one statement, each touched signature updated once, the jobs marked
    analysed in one statement, and one `failures_analysed` signal for triage's rollups and regressions.
    The failures are then indexed in one bulk request: at once when `index_now` (the worker), else by a
    task queued on commit. An Elasticsearch outage only delays indexing (`indexed_at` stays NULL)."""
    result = BatchResult()
    ids = sorted(set(job_ids))
    jobs = {job.pk: job for job in Job.objects.filter(pk__in=ids)}
    result.missing = [pk for pk in ids if pk not in jobs]
    result.succeeded = [pk for pk, job in jobs.items() if not job.status or job.status in SUCCESS_STATUSES]
    if result.succeeded:
        Job.objects.filter(pk__in=result.succeeded).update(ingest_state=Job.Ingest.ANALYSED, ingest_error="")
    analyses = {}
    for pk, job in jobs.items():
        if pk in result.succeeded:
            continue
        try:
            analyses[pk] = _analyse_log(job)
        except OSError as exc:
            result.unreadable[pk] = exc
            Job.objects.filter(pk=pk).update(ingest_state=Job.Ingest.ERROR, ingest_error=f"log unreadable: {exc}")
    if not analyses:
        return result
    if settings.JOBTRIAGE_LEARN_FROM_TRIAGE:
        analyses = _learn_from_triage(analyses)
    with transaction.atomic():
        # Rows locked in one order (job ids, then signature ids) by every batch: no deadlock between workers.
        locked = {job.pk: job for job in Job.objects.select_for_update().filter(pk__in=analyses).order_by("pk")}
        analyses = {pk: a for pk, a in analyses.items() if pk in locked}  # deleted meanwhile: nothing to store
        # A person's grouping rule (merge/split, jobs_ingest/grouping.py) wins over the fingerprint.
        chosen = signatures_by_rule(analyses, _signatures_for(analyses.values()))
        previous = {job_id: (sig, gpu) for job_id, sig, gpu in
                    Failure.objects.filter(job_id__in=locked).values_list("job_id", "signature_id", "gpu_seconds")}
        gpu = _gpu_seconds(list(locked))
        rows = []
        for pk, analysis in analyses.items():
            facts = analysis.as_dict()
            signature, rule = chosen[pk]
            rows.append(Failure(job=locked[pk], signature=signature, grouping_rule=rule, gpu_seconds=gpu.get(pk, 0.0),
                                indexed_at=None, judged_like_id=int(analysis.judged_like) if analysis.judged_like else None,
                                **{k: facts[k] for k in FAILURE_FIELDS}))
        Failure.objects.bulk_create(rows, update_conflicts=True, unique_fields=["job"], update_fields=UPSERT_FIELDS)
        failures = list(Failure.objects.filter(job_id__in=analyses).order_by("pk"))
        for failure in failures:
            failure.job = locked[failure.job_id]
            failure.signature = chosen[failure.job_id][0]
        failure_ids = [f.pk for f in failures]
        new_to_signature = {f.pk: previous.get(f.job_id, (None,))[0] != f.signature_id for f in failures}
        moved_from = _update_signatures(failures, previous, analyses)
        enforce_clusters({f.signature for f in failures})
        failures_analysed.send(sender=Failure, failures=failures, new_to_signature=new_to_signature)
        Job.objects.filter(pk__in=analyses).update(ingest_state=Job.Ingest.ANALYSED, ingest_error="",
                                                   updated_at=timezone.now())
        if moved_from:
            # The old signatures' documents are recounted, and their first failures (perhaps a new
            # representative) re-indexed.
            firsts = [Failure.objects.filter(signature_id=s).order_by("pk").values_list("pk", flat=True).first()
                      for s in sorted(moved_from)]
            firsts = [pk for pk in firsts if pk is not None and pk not in failure_ids]
            transaction.on_commit(lambda: enqueue_indexing(firsts, signature_ids=sorted(moved_from)))
        if not index_now:
            transaction.on_commit(lambda: enqueue_indexing(failure_ids))
    if index_now:
        try:
            index_failures(failure_ids)
        except IndexingError as exc:
            log.warning("indexing of %d failures deferred: %s", len(failure_ids), exc)
            enqueue_indexing(failure_ids)
    for failure in failures:
        log.info("job %s analysed: %s (%s, rule %s) signature %s", failure.job, failure.category, failure.confidence,
                 failure.rule, failure.signature.fingerprint)
    result.failures = {f.job_id: f for f in failures}
    return result


def _analyse_log(job: Job):
    path = Path(settings.JOBTRIAGE_LOG_DIR) / job.log_path if job.log_path else None
    if path is not None:
        return analyse_log(path, exit_code=job.exit_code, signal=job.signal or None)
    return analyse_text("", exit_code=job.exit_code, signal=job.signal or None)


def _learn_from_triage(analyses: dict) -> dict:
    """Analyses take the category of their nearest judged neighbours when those agree (core/judged.py
    decides: an unsure tag, or a tag people corrected on a near-identical failure); one search request per
    batch. With Elasticsearch down the rules' answers stand."""
    client, prefix = es_client(), settings.ES_INDEX_PREFIX
    try:
        corrected = corrected_categories(client, prefix)
        ask = {pk: a for pk, a in analyses.items() if is_unsure(a) or a.category in corrected}
        found = judged_neighbours(client, prefix, ask) if ask else {}
    except SearchUnavailable as exc:
        log.warning("learning from triage skipped for %d analyses: %s", len(analyses), exc)
        return analyses
    return {pk: refine(a, found[pk]) if pk in found else a for pk, a in analyses.items()}


def resolve_line_numbers(failure: Failure) -> Failure:
    """Make a failure's line numbers count from the start of its log, counting the newlines before its
    window now (a streamed scan, about a second per GB), for a failure analysed deep in a big log
    (`line_numbers_from` > 0). Done once, when someone opens the job's page; a no-op otherwise or when
    the log is gone (the numbers then stay relative to the window, and the page says so)."""
    start = failure.line_numbers_from
    job = failure.job
    if not start or not job.log_path:
        return failure
    try:
        with LogSource(Path(settings.JOBTRIAGE_LOG_DIR) / job.log_path) as log:
            if log.size < start:
                return failure  # not the log that was analysed
            shift = log.line_number_at(start) - 1
    except OSError:
        return failure
    # Conditional on the offset, so a concurrent re-analysis or a second viewer cannot shift twice.
    moved = Failure.objects.filter(pk=failure.pk, line_numbers_from=start).update(
        line_numbers_from=0, excerpt_start_line=F("excerpt_start_line") + shift,
        failure_line_number=F("failure_line_number") + shift, indexed_at=None)
    if moved:
        transaction.on_commit(lambda: enqueue_indexing([failure.pk]))
    failure.refresh_from_db(fields=["line_numbers_from", "excerpt_start_line", "failure_line_number"])
    return failure


def _signatures_for(analyses) -> dict[tuple[str, str], Signature]:
    """The batch's signatures, created where missing (one INSERT ... ON CONFLICT DO NOTHING, one SELECT)."""
    wanted = {}
    for a in analyses:
        wanted.setdefault((a.fingerprint, a.normaliser_version), a)
    Signature.objects.bulk_create(
        [Signature(fingerprint=f, normaliser_version=v, exception_type=a.exception_type[:255],
                   masked_message=a.masked_message, category=a.category, cluster=a.cluster,
                   cluster_message=a.cluster_message, basis=a.signature_basis) for (f, v), a in wanted.items()],
        ignore_conflicts=True)
    query = Q()
    for fingerprint, version in wanted:
        query |= Q(fingerprint=fingerprint, normaliser_version=version)
    found = {(s.fingerprint, s.normaliser_version): s for s in Signature.objects.filter(query)}
    for key, signature in found.items():
        analysis = wanted[key]
        if not signature.cluster and analysis.cluster:  # made before clusters; a person's split is never undone
            Signature.objects.filter(pk=signature.pk, cluster="").update(
                cluster=analysis.cluster, cluster_message=analysis.cluster_message)
            signature.cluster, signature.cluster_message = analysis.cluster, analysis.cluster_message
        if not signature.basis and analysis.signature_basis:  # made before bases were recorded
            Signature.objects.filter(pk=signature.pk, basis="").update(basis=analysis.signature_basis)
            signature.basis = analysis.signature_basis
    return found


def _gpu_seconds(job_ids: list[int]) -> dict[int, float]:
    """GPUs x wall time summed over each job's attempts (one query for the batch)."""
    totals: dict[int, float] = {}
    for attempt in Attempt.objects.filter(job_id__in=job_ids).only("job_id", "gpus", "started_at", "ended_at"):
        totals[attempt.job_id] = totals.get(attempt.job_id, 0.0) + attempt.gpu_seconds
    return totals


def _update_signatures(failures: list[Failure], previous: dict, analyses: dict) -> set[int]:
    """Each touched signature updated once, in place (O(1) whatever its size): counters, first/last seen,
    teams, and its automatic category (its latest failure's). A re-analysis of the same job only adjusts
    its GPU time; failures that moved to another signature recount the old one. Returns the old ones."""
    by_signature: dict[int, list[Failure]] = {}
    for failure in failures:
        by_signature.setdefault(failure.signature_id, []).append(failure)
    locked = {s.pk: s for s in Signature.objects.select_for_update().filter(pk__in=by_signature).order_by("pk")
              .only("pk", "teams")}
    for signature_id in sorted(by_signature):
        group = by_signature[signature_id]
        new = [f for f in group if previous.get(f.job_id, (None,))[0] != signature_id]
        seen = [f.job.ended_at or f.job.received_at for f in group]
        latest = max(group, key=lambda f: (f.job.ended_at or f.job.received_at, f.pk))
        gpu_delta = sum(f.gpu_seconds for f in group) - sum(previous[f.job_id][1] for f in group if f not in new)
        teams = sorted({*locked[signature_id].teams, *(f.job.team for f in group if f.job.team)})
        Signature.objects.filter(pk=signature_id).update(
            category=latest.category, confidence=latest.confidence, failure_count=F("failure_count") + len(new),
            gpu_seconds=F("gpu_seconds") + gpu_delta, teams=teams,
            first_seen=Least(Coalesce("first_seen", Value(min(seen))), Value(min(seen))),
            last_seen=Greatest(Coalesce("last_seen", Value(max(seen))), Value(max(seen))))
    moved_from = {previous[f.job_id][0] for f in failures
                  if f.job_id in previous and previous[f.job_id][0] != f.signature_id}
    for old in Signature.objects.filter(pk__in=moved_from).order_by("pk"):
        old.refresh_stats()
    return moved_from


FAILURE_FIELDS = ("found", "failure_line", "failure_line_number", "exception_type", "message", "traceback",
                  "user_frame", "excerpt", "excerpt_start_line", "stage", "category", "dimension", "confidence",
                  "rule", "evidence", "tagger_version", "tagging_config", "grouping_config", "retry_advice", "capture",
                  "fault", "suspect_nodes", "line_numbers_from")
# Written on a re-analysis (INSERT ... ON CONFLICT (job) DO UPDATE): every derived field.
UPSERT_FIELDS = ["signature", "grouping_rule", "judged_like", "gpu_seconds", "indexed_at", "analysed_at",
                 *FAILURE_FIELDS]
