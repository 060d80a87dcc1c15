"""Render (and send) the weekly failure report of an ISO week, per team.

    manage.py weekly_report --week 2026-W47 [--team NAME] [--dry-run]

Without --team every team in triage.Team gets its own report; a team with no failed jobs in the week gets
no email. --dry-run prints each email's plain-text part instead of sending it.
"""
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from triage import report_email, reports


class Command(BaseCommand):
    help = "Render and email each team's weekly failure report (--dry-run prints instead of sending)."

    def add_arguments(self, parser):
        parser.add_argument("--week", help="ISO week such as 2026-W47 (default: the last complete week)")
        parser.add_argument("--team", help="only this team")
        parser.add_argument("--dry-run", action="store_true", help="print the emails instead of sending them")

    def handle(self, *args, week=None, team=None, dry_run=False, **options):
        try:
            parsed = reports.Week.parse(week) if week else reports.last_complete_week(timezone.now().date())
        except ValueError as exc:
            raise CommandError(str(exc))
        summary = report_email.send_team_reports(parsed, team, dry_run=dry_run, out=self.stdout)
        self.stdout.write(summary)
