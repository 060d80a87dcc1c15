from pathlib import Path

from django.core.management.base import CommandError

from jobs_ingest.adapters import slurm

from jobs_ingest.management.ingest_command import IngestCommand, open_input


class Command(IngestCommand):
    name = "ingest_slurm"
    help = ("Ingest Slurm jobs from `sacct --json` or `sacct --parsable2` output (FILE, or - for standard input) "
            "with their slurm-%%j.out / %%x-%%j.err logs from --logs DIR. Requeues (sacct -D) become attempts, "
            "array tasks their own jobs; pending and running jobs are skipped. See docs/platforms/slurm.md.")

    def add_arguments(self, parser):
        parser.add_argument("--sacct", required=True, metavar="FILE", help="sacct output; - reads standard input")
        parser.add_argument("--format", choices=("auto", "json", "parsable2"), default="auto",
                            help="sacct output format (default: json if it starts with '{')")
        parser.add_argument("--logs", metavar="DIR", help="folder holding the jobs' log files (searched recursively)")
        self.add_wait_arguments(parser)

    def handle(self, sacct, format, logs, wait, timeout, verbosity=1, **options):
        logs_index = None
        if logs:
            folder = Path(logs)
            if not folder.is_dir():
                raise CommandError(f"{folder} is not a folder")
            logs_index = slurm.LogIndex(folder)
        stream = open_input(sacct)
        try:
            text = stream.read().decode("utf-8", errors="replace")
        finally:
            if sacct != "-":
                stream.close()
        if not text.strip():
            raise CommandError("the sacct output is empty")
        items = list(slurm.read_sacct(text, format, logs_index))
        self.store(items, len(items), wait=wait, timeout=timeout, verbosity=verbosity)
