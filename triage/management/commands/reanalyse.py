"""manage.py reanalyse [--since DATE] [--dry-run]: re-run the analysis of stored failed jobs with the
current grouping and tagging configs; judgments follow their failures to new signatures (triage/reanalyse.py)."""
from datetime import datetime, time, timezone

from django.core.management.base import BaseCommand, CommandError

from jobs_ingest.progress import Progress
from triage.reanalyse import jobs_to_reanalyse, reanalyse


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("--since", help="only jobs received on or after this date (YYYY-MM-DD) or ISO time")
        parser.add_argument("--dry-run", action="store_true", help="say what would move; change nothing")

    def handle(self, *args, since=None, dry_run=False, **options):
        moment = None
        if since:
            try:
                moment = datetime.fromisoformat(since)
            except ValueError:
                raise CommandError(f"--since {since!r} is not a date (YYYY-MM-DD) or ISO date-time") from None
            if len(since) == 10:
                moment = datetime.combine(moment.date(), time.min)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
        ids = list(jobs_to_reanalyse(moment))
        stream = getattr(self.stderr, "_out", self.stderr)
        with Progress(len(ids), "reanalyse" + (" (dry run)" if dry_run else ""), stream) as progress:
            summary = reanalyse(ids, dry_run=dry_run, progress=progress)
        for line in summary.lines(dry_run):
            self.stdout.write(line)
