import json
import time
from pathlib import Path

from django.core.management.base import CommandError

from jobs_ingest import services
from jobs_ingest.core.paths import OutsideRoot, resolve_inside
from jobs_ingest.jobspec import JobSpecError, parse_job
from jobs_ingest.management.commands._adapter_command import AdapterCommand
from jobs_ingest.progress import Progress

MAX_MANIFEST_LINE = 1024 * 1024
LOG_SUFFIXES = {".log", ".txt", ".out", ".err"}


class Command(AdapterCommand):
    name = "ingest_dir"
    help = ("Ingest a folder of job logs. With PATH/manifest.jsonl (one job's metadata per line, see "
            "docs/ingest.md) each line names its log; without one, every *.log/*.txt/*.out/*.err file is "
            "a failed job of platform 'dir'. Jobs are queued for the Celery worker; --wait waits for them.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--manifest", default="manifest.jsonl", help="manifest file name inside PATH")
        self.add_wait_arguments(parser)

    def handle(self, path, manifest, wait, timeout, **options):
        root = Path(path)
        if not root.is_dir():
            raise CommandError(f"{root} is not a folder")
        try:
            manifest_path = resolve_inside(root, manifest)
        except OutsideRoot as exc:
            raise CommandError(f"--manifest {exc}") from None
        entries = list(self._entries(root, manifest_path))
        escapes = [f"{where}: log {exc}" for where, data in entries for exc in [self._escape(root, data)] if exc]
        if escapes:
            for message in escapes:
                self.stderr.write(f"ingest_dir: refused {message}")
            raise CommandError(f"{len(escapes)} log path(s) lead outside {root}; nothing was ingested")
        started = time.monotonic()
        job_ids, created, errors = [], 0, []
        with Progress(len(entries), "ingest_dir: receiving", self.progress_stream()) as bar:
            for where, data in entries:
                try:
                    if isinstance(data, Exception):
                        raise data
                    spec = parse_job(data)
                    log_path = resolve_inside(root, spec.log) if spec.log else None
                    if log_path is not None and not log_path.is_file():
                        raise ValueError(f"log file {spec.log} not found in {root}")
                    if log_path is not None:
                        with open(log_path, "rb") as stream:
                            received = services.receive_job(spec, stream)
                    else:
                        received = services.receive_job(spec, None)
                    job_ids.append(received.job.pk)
                    created += received.created
                except (JobSpecError, ValueError, OSError) as exc:
                    errors.append(f"{where}: {exc}")
                bar.advance()
        for message in errors:
            self.stderr.write(f"ingest_dir: rejected {message}")
        analysed = self.wait_for(job_ids, timeout) if wait and job_ids else None
        summary = (f"ingest_dir: {len(job_ids)} jobs received ({created} new, {len(job_ids) - created} updated), "
                   f"{len(errors)} rejected")
        if analysed is not None:
            summary += f"; {analysed} analysed and indexed"
        self.stdout.write(f"{summary} in {time.monotonic() - started:.1f} s")
        if errors or (analysed is not None and analysed < len(job_ids)):
            raise CommandError("some jobs were rejected or not processed; see the messages above")

    @staticmethod
    def _escape(root: Path, data) -> OutsideRoot | None:
        """Why this entry's log would be read from outside the folder (.., absolute, symlink), if it would."""
        log = data.get("log") if isinstance(data, dict) else None
        if not isinstance(log, str) or not log:
            return None
        try:
            resolve_inside(root, log)
        except OutsideRoot as exc:
            return exc
        return None

    def _entries(self, root: Path, manifest: Path):
        """(location for messages, metadata dict or the error reading it)."""
        if not manifest.is_file():
            # Symlinked files are listed too (is_file follows them); _escape then refuses those pointing out.
            for log in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in LOG_SUFFIXES):
                relative = log.relative_to(root).as_posix()
                yield relative, {"platform": "dir", "external_id": relative, "status": "failed", "name": log.stem,
                                 "log": relative}
            return
        with open(manifest, "rb") as lines:
            number = 0
            while raw := lines.readline(MAX_MANIFEST_LINE + 1):
                number += 1
                where = f"{manifest.name}:{number}"
                if len(raw) > MAX_MANIFEST_LINE:
                    # Skip the rest of the line in bounded chunks: never hold a huge line in memory.
                    while not raw.endswith(b"\n") and (raw := lines.readline(MAX_MANIFEST_LINE)):
                        pass
                    yield where, ValueError(f"line longer than {MAX_MANIFEST_LINE} bytes")
                    continue
                if not raw.strip():
                    continue
                try:
                    yield where, json.loads(raw.decode("utf-8"))
                except (ValueError, RecursionError) as exc:
                    yield where, ValueError(f"invalid JSON: {str(exc)[:200]}")
