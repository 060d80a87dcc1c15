"""Receiving a job: store its record and log (idempotent), then queue its analysis (jobs_ingest.failures,
run by the worker's task). The API, the ingest commands and the adapters all come in here.

PostgreSQL is written first and is the source of truth; Elasticsearch is fed afterwards.
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from jobs_ingest.jobspec import JobSpec, looks_binary
from jobs_ingest.models import Attempt, Job
from jobs_ingest.tasks import enqueue_analysis

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


JOB_FIELDS = ("name", "submitter", "team", "status", "submitted_at", "started_at", "ended_at", "gpus", "exit_code",
              "signal", "command", "code_version", "image", "nodes")
# What a re-sent job overwrites (INSERT ... ON CONFLICT (platform, external_id) DO UPDATE); never received_at.
UPDATE_FIELDS = [*JOB_FIELDS, "extra", "ingest_state", "ingest_error", "log_path", "log_bytes", "log_sha256",
                 "updated_at"]


def receive_job(spec: JobSpec, log_stream: BinaryIO | None,
                may_update: Callable[[Job], bool] | None = None) -> Received:
    """Store (or update) one job and its log and queue its analysis: a batch of one (see receive_jobs).
    Raises LogRejected or UpdateRefused; nothing is changed then."""
    outcome, = receive_jobs([(spec, log_stream)], may_update)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def receive_jobs(items: list[tuple[JobSpec, BinaryIO | None]],
                 may_update: Callable[[Job], bool] | None = None) -> list[Received | Exception]:
    """Store (or update) jobs and their logs in one transaction, and queue their analysis in one batch.
    Idempotent on platform + external id: sending the same job twice leaves one job (within a batch,
    the last copy wins). Returns, per item, its Received or the LogRejected / UpdateRefused that kept it
    out; the other items are stored regardless.

    `may_update` decides whether an existing job may be changed by this sender (a scoped token); it is
    asked before any log is stored and again under the row locks, so a job created meanwhile by someone
    else is not taken over either. Jobs and attempts are written with one statement each (bulk upserts)."""
    outcomes: list[Received | Exception | None] = [None] * len(items)
    keys = [(spec.platform, spec.external_id) for spec, _ in items]

    def existing_jobs(lock: bool) -> dict[tuple[str, str], Job]:
        query = Q()
        for platform, external_id in set(keys):
            query |= Q(platform=platform, external_id=external_id)
        jobs = Job.objects.select_for_update() if lock else Job.objects
        return {(j.platform, j.external_id): j for j in jobs.filter(query).order_by("pk")} if keys else {}

    def refuse_foreign(existing: dict) -> None:
        for n, key in enumerate(keys):
            job = existing.get(key)
            if outcomes[n] is None and job is not None and may_update is not None and not may_update(job):
                outcomes[n] = UpdateRefused(f"job {key[0]}:{key[1]} is outside this sender's scope")

    refuse_foreign(existing_jobs(lock=False))
    rows: dict[tuple[str, str], tuple[int, Job, JobSpec]] = {}
    for n, (spec, stream) in enumerate(items):
        if outcomes[n] is not None:
            continue
        try:
            stored = store_log(stream) if stream is not None else None
        except LogRejected as exc:
            outcomes[n] = exc
            continue
        except OSError as exc:  # a log file of a folder or bundle that cannot be read: that job only
            outcomes[n] = LogRejected(f"the log could not be read: {exc}")
            continue
        job = Job(platform=spec.platform, external_id=spec.external_id, extra=spec.extra,
                  ingest_state=Job.Ingest.QUEUED, ingest_error="", **{f: getattr(spec, f) for f in JOB_FIELDS})
        if stored:
            job.log_path, job.log_bytes, job.log_sha256 = stored
        rows[keys[n]] = (n, job, spec)  # a later copy of the same job replaces an earlier one
    with transaction.atomic():
        existing = existing_jobs(lock=True)
        refuse_foreign(existing)
        rows = {key: row for key, row in rows.items() if outcomes[row[0]] is None}
        if rows:
            for key, (_, job, _) in rows.items():
                if not job.log_path and key in existing:  # sent again without a log: keep the one stored
                    old = existing[key]
                    job.log_path, job.log_bytes, job.log_sha256 = old.log_path, old.log_bytes, old.log_sha256
            stored_jobs = Job.objects.bulk_create([job for _, job, _ in rows.values()], update_conflicts=True,
                                                  unique_fields=["platform", "external_id"],
                                                  update_fields=UPDATE_FIELDS)
            ids = {(j.platform, j.external_id): j.pk for j in stored_jobs}
            missing = [key for key in rows if not ids.get(key)]  # backends that return no ids on upsert
            if missing:
                ids.update(((j.platform, j.external_id), j.pk) for j in existing_jobs(lock=False).values())
            for key, (n, job, spec) in rows.items():
                job.pk = ids[key]
            with_attempts = [job for _, job, spec in rows.values() if spec.attempts]
            if with_attempts:
                Attempt.objects.filter(job__in=with_attempts).delete()
                Attempt.objects.bulk_create(
                    Attempt(job=job, number=a.number, started_at=a.started_at, ended_at=a.ended_at, gpus=a.gpus,
                            exit_code=a.exit_code, status=a.status)
                    for _, job, spec in rows.values() for a in spec.attempts)
            job_ids = [job.pk for _, job, _ in rows.values()]
            transaction.on_commit(lambda: enqueue_analysis(job_ids))
    for n, key in enumerate(keys):
        if outcomes[n] is None:
            _, job, _ = rows[key]
            outcomes[n] = Received(job, key not in existing)
    return outcomes
