"""Ingestion actions: receive a job, analyse its log, index its failure.

PostgreSQL is written first and is the source of truth; Elasticsearch is fed afterwards, by a task
queued on commit, and can always be rebuilt with `manage.py reindex`.
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterable

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Min, Value
from django.db.models.functions import Coalesce, Greatest, Least
from django.utils import timezone

from elasticsearch import NotFoundError

from jobs_ingest import search_index
from jobs_ingest.core import analyse_log, analyse_text
from jobs_ingest.jobspec import SUCCESS_STATUSES, JobSpec, looks_binary
from jobs_ingest.models import Attempt, Failure, Job, Signature
from jobs_ingest.signals import failure_analysed

log = logging.getLogger(__name__)
COPY_CHUNK = 1024 * 1024


class LogRejected(ValueError):
    """The log cannot be stored (too large, binary, unreadable); nothing was changed."""


@dataclass(frozen=True)
class Received:
    job: Job
    created: bool


def store_log(stream: BinaryIO) -> tuple[str, int, str]:
    """Copy a log into JOBTRIAGE_LOG_DIR, content-addressed, in bounded memory.
    Returns (path relative to the log dir, size in bytes, sha256)."""
    log_dir = Path(settings.JOBTRIAGE_LOG_DIR)
    log_dir.mkdir(parents=True, exist_ok=True)
    digest, size, limit = hashlib.sha256(), 0, settings.JOBTRIAGE_MAX_LOG_BYTES
    fd, tmp = tempfile.mkstemp(dir=log_dir, prefix=".incoming-")
    try:
        with os.fdopen(fd, "wb") as out:
            first = True
            while chunk := stream.read(COPY_CHUNK):
                if first and looks_binary(chunk[:8192]):
                    raise LogRejected("the log looks like binary data, not text (many NUL/control bytes)")
                first = False
                size += len(chunk)
                if size > limit:
                    raise LogRejected(f"the log is larger than the limit of {limit} bytes (JOBTRIAGE_MAX_LOG_BYTES)")
                digest.update(chunk)
                out.write(chunk)
        sha = digest.hexdigest()
        relative = Path(sha[:2]) / f"{sha}.log"
        (log_dir / relative).parent.mkdir(exist_ok=True)
        os.replace(tmp, log_dir / relative)
        return str(relative), size, sha
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class UpdateRefused(PermissionError):
    """The job exists and the sender may not change it; nothing was changed."""


def receive_job(spec: JobSpec, log_stream: BinaryIO | None,
                may_update: Callable[[Job], bool] | None = None) -> Received:
    """Store (or update) a job and its log and queue its analysis. Idempotent on platform +
    external id: sending the same job twice leaves one job.

    `may_update` decides whether an existing job may be changed by this sender (a scoped token);
    it is asked before the log is stored and again under the row lock, so a job created meanwhile by
    someone else is not taken over either."""
    def refuse_foreign(existing: Job | None) -> None:
        if existing is not None and may_update is not None and not may_update(existing):
            raise UpdateRefused(f"job {spec.platform}:{spec.external_id} is outside this sender's scope")

    refuse_foreign(Job.objects.filter(platform=spec.platform, external_id=spec.external_id).first())
    stored = store_log(log_stream) if log_stream is not None else None
    fields = {name: getattr(spec, name) for name in (
        "name", "submitter", "team", "status", "submitted_at", "started_at", "ended_at", "gpus", "exit_code",
        "signal", "command", "code_version", "image")}
    fields["extra"] = spec.extra
    fields["ingest_state"] = Job.Ingest.QUEUED
    fields["ingest_error"] = ""
    if stored:
        fields["log_path"], fields["log_bytes"], fields["log_sha256"] = stored
    with transaction.atomic():
        refuse_foreign(Job.objects.select_for_update().filter(
            platform=spec.platform, external_id=spec.external_id).first())
        job, created = Job.objects.select_for_update().update_or_create(
            platform=spec.platform, external_id=spec.external_id, defaults=fields)
        if spec.attempts:
            job.attempts.all().delete()
            Attempt.objects.bulk_create(Attempt(
                job=job, number=a.number, started_at=a.started_at, ended_at=a.ended_at, gpus=a.gpus,
                exit_code=a.exit_code, status=a.status) for a in spec.attempts)
        transaction.on_commit(lambda: enqueue_analysis(job.pk))
    return Received(job, created)


def enqueue_analysis(job_id: int) -> None:
    """Queue the analysis; if the broker is down the job stays QUEUED and `requeue_pending` (run by
    beat) queues it again later, so an accepted job is never dropped."""
    from jobs_ingest.tasks import analyse_job
    try:
        analyse_job.delay(job_id)
    except Exception as exc:  # kombu raises several types for an unreachable broker
        log.warning("job %s stored but not queued (broker unavailable: %s); requeue_pending will retry", job_id, exc)


def analyse(job_id: int, *, index_now: bool = False) -> Failure | None:
    """Analyse a stored job's log and store its failure and signature. Safe to run twice.

    The failure is then indexed: at once when `index_now` (the worker's task, saving a round trip
    through the broker), else by a task queued on commit. Either way an Elasticsearch outage only
    delays indexing: the failure stays `indexed_at = NULL` and is retried."""
    job = Job.objects.get(pk=job_id)
    if not job.status or job.status in SUCCESS_STATUSES:
        Job.objects.filter(pk=job_id).update(ingest_state=Job.Ingest.ANALYSED, ingest_error="")
        return None
    path = Path(settings.JOBTRIAGE_LOG_DIR) / job.log_path if job.log_path else None
    try:
        if path is not None:
            analysis = analyse_log(path, exit_code=job.exit_code, signal=job.signal or None)
        else:
            analysis = analyse_text("", exit_code=job.exit_code, signal=job.signal or None)
    except OSError as exc:
        Job.objects.filter(pk=job_id).update(ingest_state=Job.Ingest.ERROR, ingest_error=f"log unreadable: {exc}")
        raise
    facts = analysis.as_dict()
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        signature, _ = Signature.objects.get_or_create(
            fingerprint=analysis.fingerprint, normaliser_version=analysis.normaliser_version,
            defaults={"exception_type": analysis.exception_type[:255], "masked_message": analysis.masked_message,
                      "category": analysis.category})
        previous = Failure.objects.filter(job=job).values_list("signature_id", "gpu_seconds").first()
        gpu_seconds = sum(a.gpu_seconds for a in job.attempts.all())
        failure, _ = Failure.objects.update_or_create(job=job, defaults={
            "signature": signature, "gpu_seconds": gpu_seconds, "indexed_at": None,
            **{k: facts[k] for k in FAILURE_FIELDS}})
        _update_signature(signature, failure, job, previous, analysis.category, analysis.confidence)
        failure_analysed.send(sender=Failure, failure=failure, signature=signature,
                              new_to_signature=previous is None or previous[0] != signature.pk)
        job.ingest_state, job.ingest_error = Job.Ingest.ANALYSED, ""
        job.save(update_fields=["ingest_state", "ingest_error", "updated_at"])
        if not index_now:
            transaction.on_commit(lambda: enqueue_indexing([failure.pk]))
    if index_now:
        try:
            index_failures([failure.pk])
        except search_index.IndexingError as exc:
            log.warning("indexing failure %s deferred: %s", failure.pk, exc)
            enqueue_indexing([failure.pk])
    log.info("job %s analysed: %s (%s, rule %s) signature %s", job, analysis.category, analysis.confidence,
             analysis.rule, analysis.fingerprint)
    return failure


FAILURE_FIELDS = ("found", "failure_line", "failure_line_number", "exception_type", "message", "traceback",
                  "user_frame", "excerpt", "excerpt_start_line", "stage", "category", "dimension", "confidence",
                  "rule", "evidence", "tagger_version", "retry_advice", "capture")


def _update_signature(signature: Signature, failure: Failure, job: Job, previous: tuple | None,
                      category: str, confidence: float) -> None:
    """Update the signature in one statement: its automatic category (its latest failure's) and its
    counters, in place (O(1), whatever its size). A re-analysis of the same job only adjusts its GPU
    time; a failure that moved to another signature recounts the old one."""
    seen = job.ended_at or job.received_at
    moved = previous is not None and previous[0] != signature.pk
    new = previous is None or moved
    signature.category, signature.confidence = category, confidence
    Signature.objects.filter(pk=signature.pk).update(
        category=category, confidence=confidence,
        failure_count=F("failure_count") + (1 if new else 0),
        gpu_seconds=F("gpu_seconds") + failure.gpu_seconds - (0 if new else previous[1]),
        first_seen=Least(Coalesce("first_seen", Value(seen)), Value(seen)),
        last_seen=Greatest(Coalesce("last_seen", Value(seen)), Value(seen)))
    if job.team:
        locked = Signature.objects.select_for_update().only("teams").get(pk=signature.pk)
        if job.team not in locked.teams:
            locked.teams = sorted({*locked.teams, job.team})
            locked.save(update_fields=["teams"])
    if moved:
        old = Signature.objects.get(pk=previous[0])
        old.refresh_stats()
        # If this failure was the old signature's representative (its first), the next one takes over.
        # The old signature's document is recounted either way (count, GPU time, platforms, latest).
        first = old.failures.order_by("pk").values_list("pk", flat=True).first()
        successor = [first] if first is not None and first > failure.pk else []
        transaction.on_commit(lambda: enqueue_indexing(successor, signature_ids=[old.pk]))


def enqueue_indexing(failure_ids: list[int], signature_ids: list[int] | None = None) -> None:
    from jobs_ingest.tasks import index_failures
    try:
        if signature_ids:
            index_failures.delay(failure_ids, signature_ids)
        else:
            index_failures.delay(failure_ids)
    except Exception as exc:
        log.warning("failures %s not queued for indexing (%s); `reindex --pending` will index them", failure_ids, exc)


_clients: dict[str, object] = {}
_ensured: set[tuple[str, str]] = set()


def es_client():
    """One client (and connection pool) per process and URL."""
    url = settings.ELASTICSEARCH_URL
    if url not in _clients:
        _clients[url] = search_index.make_client(url)
    return _clients[url]


def ensure_index_once(client) -> None:
    """Create the template/index/alias the first time this process indexes (not on every task)."""
    key = (settings.ELASTICSEARCH_URL, settings.ES_INDEX_PREFIX)
    if key not in _ensured:
        search_index.ensure_index(client, settings.ES_INDEX_PREFIX)
        _ensured.add(key)


# Other apps add fields to the search documents without jobs_ingest importing them: each provider
# takes a list of failures and returns {failure_id: {field: value}} (triage adds its judgments).
DOCUMENT_PROVIDERS: list = []


def failure_documents(failures: Iterable[Failure], batch_size: int = 500) -> Iterable[dict]:
    batch: list[Failure] = []
    for failure in failures:
        batch.append(failure)
        if len(batch) >= batch_size:
            yield from _documents(batch)
            batch = []
    if batch:
        yield from _documents(batch)


def _documents(failures: list[Failure]) -> Iterable[dict]:
    first_failure = dict(Failure.objects.filter(signature_id__in={f.signature_id for f in failures})
                         .values_list("signature_id").annotate(first=Min("id")))
    extras: dict[int, dict] = {}
    for provider in DOCUMENT_PROVIDERS:
        for failure_id, fields in provider(failures).items():
            extras.setdefault(failure_id, {}).update(fields)
    for failure in failures:
        job = failure.job
        yield extras.get(failure.pk, {}) | {
            "failure_id": str(failure.pk), "job_id": str(job.pk), "signature_id": str(failure.signature_id),
            "fingerprint": failure.signature.fingerprint, "platform": job.platform, "external_id": job.external_id,
            "submitter": job.submitter, "team": job.team, "status": job.status, "job_name": job.name,
            "exception_type": failure.exception_type, "user_frame": failure.user_frame, "stage": failure.stage,
            "category": failure.category, "dimension": failure.dimension, "rule": failure.rule,
            "retry_advice": failure.retry_advice, "tagger_version": failure.tagger_version,
            "normaliser_version": failure.signature.normaliser_version,
            "message": failure.message, "masked_message": failure.signature.masked_message,
            "failure_line": failure.failure_line, "traceback": failure.traceback, "excerpt": failure.excerpt,
            "gpus": job.gpus, "attempts": len(job.attempts.all()), "gpu_hours": failure.gpu_hours,
            "confidence": failure.confidence, "failure_line_number": failure.failure_line_number,
            "submitted_at": job.submitted_at, "started_at": job.started_at, "ended_at": job.ended_at,
            "ingested_at": failure.analysed_at,
            "representative": first_failure.get(failure.signature_id) == failure.pk,
        }


def _status(error: dict) -> int | None:
    return next(iter(error.values()), {}).get("status") if isinstance(error, dict) else None


def failures_for_index():
    return Failure.objects.select_related("job", "signature").prefetch_related("job__attempts").order_by("pk")


def index_failures(failure_ids: list[int], signature_ids: list[int] | None = None) -> int:
    """Push these failures (their current database state) to Elasticsearch, with the documents of
    their signatures in the same bulk request; mark them indexed. signature_ids: more signatures
    whose documents are recounted from scratch (one a failure left). Returns the failures indexed."""
    failures = list(failures_for_index().filter(pk__in=failure_ids)) if failure_ids else []
    if not failures and not signature_ids:
        return 0
    started = timezone.now()
    client = es_client()
    ensure_index_once(client)
    prefix = settings.ES_INDEX_PREFIX
    failure_docs = list(failure_documents(failures))
    ok, errors = _write_with_signatures(client, prefix, failure_docs, failures, signature_ids or [])
    if errors and all(_status(e) == 404 for e in errors):
        # The index was deleted behind our back (or by a test): create it again and retry once.
        search_index.ensure_index(client, prefix)
        ok, errors = _write_with_signatures(client, prefix, failure_docs, failures, signature_ids or [])
    if errors:
        log.error("indexing errors for failures %s: %s", failure_ids, errors[:3])
    failed = {str(_item(e).get("_id")) for e in errors} if errors else set()
    done = [f.pk for f in failures if str(f.pk) not in failed]
    # Only mark what was not changed again since we read it (a newer analysis re-queues itself).
    Failure.objects.filter(pk__in=done, analysed_at__lte=started).update(indexed_at=timezone.now())
    return ok


def index_signatures(signature_ids: list[int]) -> int:
    """Rewrite these signatures' documents from PostgreSQL (after a judgment). Returns how many."""
    if not signature_ids:
        return 0
    client = es_client()
    ensure_index_once(client)
    _, errors = _write_with_signatures(client, settings.ES_INDEX_PREFIX, [], [], list(signature_ids))
    if errors:
        raise search_index.IndexingError(f"signature documents rejected: {errors[:3]}")
    return len(signature_ids)


def _item(error: dict) -> dict:
    return next(iter(error.values()), {}) if isinstance(error, dict) else {}


def _status(error: dict) -> int | None:
    return _item(error).get("status")


# A signature document is read, merged and written back with if_seq_no: a concurrent writer makes the
# write fail with 409 and it is redone from fresh data (Elasticsearch here has no scripted updates).
SIGNATURE_WRITE_ATTEMPTS = 5


def _write_with_signatures(client, prefix: str, failure_docs: list[dict], failures: list[Failure],
                           recount_ids: list[int]) -> tuple[int, list[dict]]:
    """One bulk request: the failure documents and their signatures' documents. Returns (failure
    documents written, errors); signature write conflicts are redone here from fresh data."""
    signature_ids = sorted({f.signature_id for f in failures} | {int(s) for s in recount_ids})
    actions = list(search_index.index_actions(prefix, failure_docs))
    signature_errors: list[dict] = []
    ok_failures, failure_errors = 0, []
    for attempt in range(SIGNATURE_WRITE_ATTEMPTS):
        actions += signature_actions(client, prefix, signature_ids, failures, recount_ids=recount_ids)
        _, errors = search_index.bulk_write(client, actions)
        signature_errors = [e for e in errors if _is_signature_item(e)]
        if attempt == 0:
            failure_errors = [e for e in errors if not _is_signature_item(e)]
            ok_failures = len(failure_docs) - len(failure_errors)
        conflicts = sorted({int(_item(e)["_id"]) for e in signature_errors if _status(e) == 409})
        # Deleting a signature document that is not there is no error.
        signature_errors = [e for e in signature_errors if _status(e) != 409
                            and not (next(iter(e)) == "delete" and _status(e) == 404)]
        if not conflicts:
            break
        log.info("signature documents %s were changed concurrently; rewriting them", conflicts)
        signature_ids, actions = conflicts, []
    else:
        signature_errors.append({"index": {"_id": ",".join(map(str, signature_ids)), "status": 409,
                                           "error": "signature documents kept changing concurrently"}})
    return ok_failures, failure_errors + signature_errors


def _is_signature_item(error: dict) -> bool:
    index = _item(error).get("_index", "")
    return index.endswith(f"-{search_index.SIGNATURES}") or "-failures-signatures-" in index


def _judgments(signature_ids: Iterable[int]) -> dict[int, dict]:
    """A signature's own judgment through DOCUMENT_PROVIDERS (jobs_ingest never imports triage): each
    provider is asked about a stand-in failure with id -signature_id, which no per-job override can
    name, so what comes back is the signature's judgment."""
    stand_ins = [Failure(pk=-int(s), signature_id=int(s)) for s in signature_ids]
    found: dict[int, dict] = {}
    for provider in DOCUMENT_PROVIDERS:
        for failure_id, fields in provider(stand_ins).items():
            found.setdefault(-int(failure_id), {}).update(fields)
    return found


def _seen(failure: Failure):
    return failure.job.ended_at or failure.job.received_at


def _latest_document(failure: Failure | None) -> dict:
    if failure is None:
        return {}
    job = failure.job
    return {"failure_id": failure.pk, "job_id": job.pk, "platform": job.platform, "external_id": job.external_id,
            "job_name": job.name, "team": job.team, "message": failure.message, "failure_line": failure.failure_line,
            "stage": failure.stage, "ended_at": job.ended_at}


def _latest_failure(signature: Signature, candidates: list[Failure]) -> Failure | None:
    """The signature's most recent failure: one being indexed when it is (the usual case at ingest,
    no query), else the one whose job ended at last_seen (an indexed lookup), else the newest row."""
    best = max(candidates, key=lambda f: (_seen(f), f.pk), default=None)
    if best is not None and (signature.last_seen is None or _seen(best) >= signature.last_seen):
        return best
    rows = Failure.objects.select_related("job").filter(signature_id=signature.pk)
    if signature.last_seen is not None:
        found = rows.filter(job__ended_at=signature.last_seen).order_by("-pk").first()
        if found is not None:
            return found
    return rows.order_by("-pk").first() or best


def _platforms(signature_id: int) -> set[str]:
    return set(Job.objects.filter(failure__signature_id=signature_id).values_list("platform", flat=True).distinct())


def signature_actions(client, prefix: str, signature_ids: list[int], failures: list[Failure] = (),
                      *, recount_ids: Iterable[int] = ()) -> list[dict]:
    """Bulk actions that bring these signatures' documents up to date with PostgreSQL: counters, GPU
    time, first/last seen and teams from the signature row (kept exact at ingest); the judgment; the
    latest failure; platforms = those already in the document + those of `failures` (a full recount
    for recount_ids and for documents not indexed yet). Written with if_seq_no (or create), so a
    concurrent writer's platform is never lost. A signature without failures is deleted."""
    if not signature_ids:
        return []
    alias = search_index.alias_name(prefix, search_index.SIGNATURES)
    recount = {int(s) for s in recount_ids}
    signatures = {s.pk: s for s in Signature.objects.filter(pk__in=signature_ids)}
    existing = {}
    with search_index._translate_errors("reading signature documents"):
        try:
            found = client.mget(index=alias, ids=[str(s) for s in signature_ids], source=["platforms"])
            existing = {int(d["_id"]): d for d in found["docs"] if d.get("found")}
        except NotFoundError:
            pass  # no signatures index yet: the bulk write reports 404 and index_failures creates it
    judgments = _judgments(signatures)
    by_signature: dict[int, list[Failure]] = {}
    for failure in failures:
        by_signature.setdefault(failure.signature_id, []).append(failure)
    actions = []
    for signature_id in signature_ids:
        signature = signatures.get(signature_id)
        if signature is None or signature.failure_count == 0:
            actions.append({"_op_type": "delete", "_index": alias, "_id": str(signature_id)})
            continue
        mine = by_signature.get(signature_id, [])
        current = existing.get(signature_id)
        if current is not None and signature_id not in recount:
            platforms = set(current["_source"].get("platforms") or [])
        elif signature.failure_count > len(mine):
            # O(failures of the signature): only when its document is first written or recounted.
            platforms = _platforms(signature_id)
        else:
            platforms = set()
        platforms |= {f.job.platform for f in mine}
        judgment = judgments.get(signature_id, {})
        latest = mine if signature_id not in recount else []
        doc = search_index.signature_document(
            signature_id=signature.pk, fingerprint=signature.fingerprint,
            normaliser_version=signature.normaliser_version, exception_type=signature.exception_type,
            masked_message=signature.masked_message, category=signature.category,
            confirmed_category=judgment.get("confirmed_category") or "", root_cause=judgment.get("root_cause") or "",
            triage_state=judgment.get("triage_state") or "", failure_count=signature.failure_count,
            gpu_hours=signature.gpu_seconds / 3600, first_seen=signature.first_seen, last_seen=signature.last_seen,
            teams=signature.teams, platforms=platforms,
            latest_failure=_latest_document(_latest_failure(signature, latest)))
        action = {"_index": alias, "_id": str(signature_id), "_source": doc}
        if current is None:
            action["_op_type"] = "create"  # fails with 409 if a concurrent writer created it first
        else:
            action.update(_op_type="index", if_seq_no=current["_seq_no"], if_primary_term=current["_primary_term"])
        actions.append(action)
    return actions


def all_signature_documents(batch_size: int = 2000) -> Iterable[dict]:
    """Every signature's document, for a rebuild: platforms and latest failure computed for all
    signatures in one pass over the failures (per signature lookups would be O(failures) each)."""
    failure, job = Failure._meta.db_table, Job._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT f.signature_id, array_agg(DISTINCT j.platform), "
            f"(array_agg(f.id ORDER BY COALESCE(j.ended_at, j.received_at) DESC, f.id DESC))[1] "
            f"FROM {failure} f JOIN {job} j ON j.id = f.job_id GROUP BY f.signature_id")
        summary = {row[0]: (set(row[1]), row[2]) for row in cursor.fetchall()}
    ids = sorted(summary)
    for start in range(0, len(ids), batch_size):
        chunk = ids[start:start + batch_size]
        signatures = Signature.objects.filter(pk__in=chunk).order_by("pk")
        judgments = _judgments(chunk)
        latest = {f.pk: f for f in Failure.objects.select_related("job").filter(pk__in=[summary[s][1] for s in chunk])}
        for signature in signatures:
            platforms, latest_id = summary[signature.pk]
            judgment = judgments.get(signature.pk, {})
            yield search_index.signature_document(
                signature_id=signature.pk, fingerprint=signature.fingerprint,
                normaliser_version=signature.normaliser_version, exception_type=signature.exception_type,
                masked_message=signature.masked_message, category=signature.category,
                confirmed_category=judgment.get("confirmed_category") or "",
                root_cause=judgment.get("root_cause") or "", triage_state=judgment.get("triage_state") or "",
                failure_count=signature.failure_count, gpu_hours=signature.gpu_seconds / 3600,
                first_seen=signature.first_seen, last_seen=signature.last_seen, teams=signature.teams,
                platforms=platforms, latest_failure=_latest_document(latest.get(latest_id)))


def signatures_with_failures_count() -> int:
    return Signature.objects.filter(failure_count__gt=0).count()
