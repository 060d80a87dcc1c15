from django.core.management.base import CommandError

from jobs_ingest.adapters import philly

from jobs_ingest.management.ingest_command import IngestCommand, open_input


class Command(IngestCommand):
    name = "ingest_philly"
    help = ("Ingest the public Philly trace's cluster_job_log (msr-fiddle/philly-traces; about 1 GB, read as a "
            "stream) so its jobs, statuses and GPU hours show in the charts. The trace has no logs: failed jobs "
            "are stored as unclassified failures with their GPU cost. See docs/platforms/philly.md.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="the cluster_job_log file; - reads standard input")
        parser.add_argument("--limit", type=int, metavar="N", help="stop after the first N jobs of the file")
        self.add_wait_arguments(parser)

    def handle(self, file, limit, wait, timeout, verbosity=1, **options):
        if limit is not None and limit < 1:
            raise CommandError("--limit must be at least 1")
        stream = open_input(file)
        try:
            self.store(philly.read_trace(stream, limit), limit, wait=wait, timeout=timeout, verbosity=verbosity,
                       stop_error=philly.TraceFormatError)
        finally:
            if file != "-":
                stream.close()
