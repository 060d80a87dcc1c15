from dataclasses import replace

from django.core.management.base import CommandError

from jobs_ingest.adapters import Adapted, slurm, slurm_merge
from jobs_ingest.management.ingest_command import IngestCommand, open_input
from jobs_ingest.models import Job


class Command(IngestCommand):
    name = "ingest_slurm"
    # The description is printed as written (argparse does not %-format it): single percent signs.
    help = ("Ingest Slurm jobs from `sacct --json` or `sacct --parsable2` output (FILE, or - for standard input) "
            "with their slurm-%j.out / %x-%j.err logs from --logs DIR. Requeues (sacct -D) become attempts, "
            "array tasks their own jobs; pending and running jobs are skipped. A job already stored keeps what "
            "was known about how its run ended. See docs/platforms/slurm.md.")

    def add_arguments(self, parser):
        parser.add_argument("--sacct", required=True, metavar="FILE", help="sacct output; - reads standard input")
        parser.add_argument("--format", choices=("auto", "json", "parsable2"), default="auto",
                            help="sacct output format (default: json if it starts with '{')")
        parser.add_argument("--logs", metavar="DIR", help="folder holding the jobs' log files (searched recursively; "
                                                          "files that resolve outside it are not read)")
        self.add_wait_arguments(parser)

    def handle(self, sacct, format, logs, wait, timeout, verbosity=1, **options):
        logs_index = self.log_index(logs, slurm.LogIndex)
        stream = open_input(sacct)
        try:
            text = stream.read().decode("utf-8", errors="replace")
        finally:
            if sacct != "-":
                stream.close()
        if not text.strip():
            raise CommandError("the sacct output is empty (did sacct fail? it prints nothing when it refuses a "
                               "--format field, e.g. Restarts on Slurm 22.05)")
        items = list(slurm.read_sacct(text, format, logs_index))
        self.unknown_exit_codes: dict[str, int] = {}
        self.store(items, len(items), wait=wait, timeout=timeout, verbosity=verbosity)

    def prepare(self, item: Adapted) -> Adapted:
        """Merge with what is stored, so a later sacct never flips how a run ended (slurmctld restarts
        rewrite recently finished jobs) and a report without -D never drops stored requeues."""
        metadata = item.metadata
        job = (Job.objects.filter(platform=slurm.PLATFORM, external_id=metadata.get("external_id"))
               .prefetch_related("attempts").first())
        if job is not None:
            metadata, later = slurm_merge.keep_known_facts(stored_metadata(job), metadata)
            if later:
                said = ", ".join(f"{k} {v if v is not None else '-'}" for k, v in later.items())
                self.stderr.write(f"{self.name}: job {job.external_id}: sacct now says {said}; kept what it said "
                                  "first (recorded in slurm_later_reports)")
            item = replace(item, metadata=metadata)
        if "exit_code_unknown" in metadata:
            reason = metadata["exit_code_unknown"]
            self.unknown_exit_codes[reason] = self.unknown_exit_codes.get(reason, 0) + 1
        return item

    def store(self, *args, **kwargs):
        try:
            super().store(*args, **kwargs)
        finally:
            for reason, count in getattr(self, "unknown_exit_codes", {}).items():
                self.stderr.write(f"{self.name}: {count} jobs stored with exit code unknown: {reason}; "
                                  "sacct --parsable2 has them (docs/platforms/slurm.md)")


def stored_metadata(job: Job) -> dict:
    """A stored job in the shape of the metadata the adapter builds (times as ISO text)."""
    def iso(value):
        return value.isoformat() if value is not None else None
    return {
        **job.extra, "platform": job.platform, "external_id": job.external_id, "status": job.status,
        "name": job.name, "submitter": job.submitter, "team": job.team, "submitted_at": iso(job.submitted_at),
        "started_at": iso(job.started_at), "ended_at": iso(job.ended_at), "gpus": job.gpus,
        "exit_code": job.exit_code, "signal": job.signal or None, "command": job.command,
        "code_version": job.code_version, "image": job.image,
        "attempts": [{"started_at": iso(a.started_at), "ended_at": iso(a.ended_at), "gpus": a.gpus,
                      "exit_code": a.exit_code, "status": a.status} for a in job.attempts.all()],
    }
