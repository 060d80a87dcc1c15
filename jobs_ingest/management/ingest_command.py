"""The base of every ingest command (ingest_dir, ingest_slurm, ingest_k8s, ingest_philly): `store` receives
the jobs a reader produced (Adapted, Rejected, Skipped) with a progress bar, bad records named and skipped
and a one-line summary; `--wait` waits for the worker. Outside commands/, so Django lists no command here."""
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Iterable

from django.core.management.base import BaseCommand, CommandError

from jobs_ingest import services
from jobs_ingest.adapters import Adapted, LogBundle, Rejected, Skipped
from jobs_ingest.jobspec import JobSpecError, parse_job
from jobs_ingest.models import Failure, Job
from jobs_ingest.progress import Progress

WAIT_SLICE = 10_000
RECEIVE_CHUNK = 200  # jobs stored per transaction (bulk upserts of jobs and attempts)


class IngestCommand(BaseCommand):
    name = "ingest"   # set by each command: prefixes its messages

    def add_wait_arguments(self, parser):
        parser.add_argument("--wait", action="store_true", help="wait until the worker analysed and indexed them")
        parser.add_argument("--timeout", type=float, default=600, help="seconds to wait with --wait")

    def log_index(self, folder: str | None, index_class):
        """The operator's log folder (--logs) indexed by the adapter's `index_class`, or None. Files that
        resolve outside the folder (symlinks out) are named here and never read."""
        if not folder:
            return None
        path = Path(folder)
        if not path.is_dir():
            raise CommandError(f"{path} is not a folder")
        index = index_class(path)
        for reason in index.refused:
            self.stderr.write(f"{self.name}: not reading log {reason}")
        return index

    def progress_stream(self):
        return getattr(self.stderr, "_out", self.stderr)  # the raw stream: the bar writes its own line ends

    def store(self, items: Iterable, total: int | None, *, wait: bool, timeout: float, verbosity: int = 1,
              stop_error: type[Exception] | None = None) -> None:
        started = time.monotonic()
        job_ids, created, errors, skipped, fatal, pending = [], 0, [], 0, None, []
        with Progress(total, f"{self.name}: receiving", self.progress_stream()) as bar:
            try:
                for item in items:
                    if isinstance(item, Rejected):
                        errors.append(f"{item.where}: {item.reason}")
                    elif isinstance(item, Skipped):
                        skipped += 1
                        if verbosity > 1:
                            self.stderr.write(f"{self.name}: skipped {item.where}: {item.reason}")
                    elif isinstance(item, Adapted):
                        try:
                            item = self.prepare(item)
                            pending.append((item, parse_job(item.metadata)))
                        except (JobSpecError, ValueError) as exc:
                            errors.append(f"{item.where}: {exc}")
                        if len(pending) >= RECEIVE_CHUNK:
                            created += self._receive_batch(pending, job_ids, errors)
                    bar.advance()
                created += self._receive_batch(pending, job_ids, errors)
            except Exception as exc:
                if stop_error is None or not isinstance(exc, stop_error):
                    raise
                fatal = exc  # the input cannot be read further; what was stored stays stored
                created += self._receive_batch(pending, job_ids, errors)
        for message in errors:
            self.stderr.write(f"{self.name}: rejected {message}")
        if fatal is not None:
            self.stderr.write(f"{self.name}: stopped reading: {fatal}")
        analysed = self.wait_for(job_ids, timeout) if wait and job_ids else None
        summary = (f"{self.name}: {len(job_ids)} jobs received ({created} new, {len(job_ids) - created} updated), "
                   f"{len(errors)} rejected")
        if skipped:
            summary += f", {skipped} skipped (not finished)"
        if analysed is not None:
            summary += f"; {analysed} analysed and indexed"
        self.stdout.write(f"{summary} in {time.monotonic() - started:.1f} s")
        if errors or fatal is not None or (analysed is not None and analysed < len(job_ids)):
            raise CommandError("some records were rejected or not processed; see the messages above")

    def prepare(self, item: Adapted) -> Adapted:
        """A command's last word on a record before it is stored (ingest_slurm merges with what is stored)."""
        return item

    @staticmethod
    def _receive_batch(pending: list, job_ids: list[int], errors: list[str]) -> int:
        """Store the pending jobs in one batch (services.receive_jobs); returns how many were new."""
        created = 0
        with ExitStack() as stack:
            pairs, kept = [], []
            for item, spec in pending:
                try:
                    stream = stack.enter_context(LogBundle(item.logs)) if item.logs else None
                except OSError as exc:
                    errors.append(f"{item.where}: {exc}")
                    continue
                pairs.append((spec, stream))
                kept.append(item)
            for item, outcome in zip(kept, services.receive_jobs(pairs)):
                if isinstance(outcome, Exception):
                    errors.append(f"{item.where}: {outcome}")
                else:
                    job_ids.append(outcome.job.pk)
                    created += outcome.created
        pending.clear()
        return created

    def wait_for(self, job_ids: list[int], timeout: float) -> int:
        """How many of the jobs were analysed and indexed before the timeout."""
        deadline = time.monotonic() + timeout
        with Progress(len(job_ids), f"{self.name}: analysing", self.progress_stream()) as bar:
            while True:
                pending = unindexed = errored = 0
                # In slices: PostgreSQL takes at most 65,535 parameters per query (the Philly trace has 117k jobs).
                for start in range(0, len(job_ids), WAIT_SLICE):
                    ids = job_ids[start:start + WAIT_SLICE]
                    pending += Job.objects.filter(pk__in=ids, ingest_state=Job.Ingest.QUEUED).count()
                    unindexed += Failure.objects.filter(job_id__in=ids, indexed_at__isnull=True).count()
                    errored += Job.objects.filter(pk__in=ids, ingest_state=Job.Ingest.ERROR).count()
                done = len(job_ids) - pending - unindexed - errored
                bar.set(done)
                if pending + unindexed == 0 or time.monotonic() > deadline:
                    if pending + unindexed:
                        self.stderr.write(f"{self.name}: timed out: {pending} jobs not analysed, {unindexed} not "
                                          "indexed (is the Celery worker running?)")
                    return done
                time.sleep(0.25 if len(job_ids) <= WAIT_SLICE else 2.0)   # big waits poll less often


def open_input(path: str):
    """A binary stream for a path, or standard input for '-' (so `sacct ... | manage.py ...` works)."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
