"""Recompute the analytics rollups from the failure and job tables (triage/rollups.py).

Needed after loading data without the application (bulk SQL, restores) or to repair them; the
application keeps them up to date otherwise. One SQL statement per table, in one transaction: the
charts keep showing the previous numbers until it commits.
"""
import time

from django.core.management.base import BaseCommand, CommandError

from triage import rollups


class Command(BaseCommand):
    help = "Recompute the analytics rollups from the source tables, with progress."

    def handle(self, *args, **options):
        start = time.monotonic()
        try:
            counts = rollups.rebuild(progress=lambda message: (self.stdout.write(message), self.stdout.flush()))
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(
            f"rollups rebuilt in {time.monotonic() - start:.1f} s: "
            + ", ".join(f"{table} {n:,}" for table, n in counts.items())))
