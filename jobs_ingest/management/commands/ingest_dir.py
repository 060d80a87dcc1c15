import json
from pathlib import Path

from django.core.management.base import CommandError
from django.utils import timezone

from jobs_ingest.adapters import Adapted, Rejected
from jobs_ingest.core.paths import OutsideRoot, resolve_inside
from jobs_ingest.jobspec import shifted_to
from jobs_ingest.management.ingest_command import IngestCommand

MAX_MANIFEST_LINE = 1024 * 1024
LOG_SUFFIXES = {".log", ".txt", ".out", ".err"}


class Command(IngestCommand):
    name = "ingest_dir"
    help = ("Ingest a folder of job logs. With PATH/manifest.jsonl (one job's metadata per line, see "
            "docs/ingest.md) each line names its log; without one, every *.log/*.txt/*.out/*.err file is "
            "a failed job of platform 'dir'. Logs must be inside PATH. Jobs are queued for the Celery worker; "
            "--wait waits for them.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--manifest", default="manifest.jsonl", help="manifest file name inside PATH")
        parser.add_argument("--shift-to-now", action="store_true",
                            help="move every job's times later by whole days so the newest is a day or two old (a "
                                 "recorded workload such as the demo, read as if it had just run)")
        self.add_wait_arguments(parser)

    def handle(self, path, manifest, wait, timeout, verbosity=1, shift_to_now=False, **options):
        root = Path(path)
        if not root.is_dir():
            raise CommandError(f"{root} is not a folder")
        try:
            manifest_path = resolve_inside(root, manifest)
        except OutsideRoot as exc:
            raise CommandError(f"--manifest {exc}") from None
        items, escapes = [], []
        for where, data in self._entries(root, manifest_path):
            try:
                items.append(self._item(root, where, data))
            except OutsideRoot as exc:
                escapes.append(f"{where}: log {exc}")
        # A log path leading out of the folder is an attack or a mistake: refuse the whole run, copy nothing.
        if escapes:
            for message in escapes:
                self.stderr.write(f"{self.name}: refused {message}")
            raise CommandError(f"{len(escapes)} log path(s) lead outside {root}; nothing was ingested")
        if shift_to_now:
            items = self._shifted(items, verbosity)
        self.store(items, len(items), wait=wait, timeout=timeout, verbosity=verbosity)

    def _shifted(self, items: list, verbosity: int) -> list:
        adapted = [item for item in items if isinstance(item, Adapted)]
        records, days = shifted_to([item.metadata for item in adapted], timezone.now())
        if verbosity:
            self.stdout.write(f"{self.name}: moved every job's times {days} day(s) later")
        moved = iter(records)
        return [Adapted(item.where, next(moved), item.logs) if isinstance(item, Adapted) else item for item in items]

    @staticmethod
    def _item(root: Path, where: str, data) -> Adapted | Rejected:
        """The job of one manifest entry; OutsideRoot when its log would be read from outside `root`."""
        if isinstance(data, Exception):
            return Rejected(where, str(data))
        log = data.get("log") if isinstance(data, dict) else None
        if not isinstance(log, str) or not log:
            return Adapted(where, data)   # no log, or a bad one that parse_job names
        log_path = resolve_inside(root, log)
        if not log_path.is_file():
            return Rejected(where, f"log file {log} not found in {root}")
        return Adapted(where, data, (log_path,))

    def _entries(self, root: Path, manifest: Path):
        """(location for messages, metadata dict or the error reading it)."""
        if not manifest.is_file():
            # Symlinked files are listed too (is_file follows them); _item refuses those pointing out.
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
