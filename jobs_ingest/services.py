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
        transaction.on_commit(lambda: enqueue_analysis([job.pk]))
    return Received(job, created)

