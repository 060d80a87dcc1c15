"""Make the ingested demo look like a platform in use: teams from the jobs, their members (the jobs'
submitters) and a manager, and the triage decisions of demo/judgments.json applied through the real
services (judgments with fixes, fixed-by links, one correction, one regression).

    manage.py demo_triage [--file demo/judgments.json]

Idempotent: a second run changes nothing. Demo users get no usable password (log in as demo / demo).
"""
import json
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError

from jobs_ingest.jobspec import SUCCESS_STATUSES
from jobs_ingest.models import Job
from triage import services, teams
from triage.models import SignatureTriage, Team
from triage.roles import ENGINEERS, MANAGERS, ensure_roles

MANAGER = "maria"


class Command(BaseCommand):
    help = "Teams, members, a manager and triage decisions for the demo data set."

    def add_arguments(self, parser):
        parser.add_argument("--file", default=str(Path(settings.BASE_DIR) / "demo" / "judgments.json"))

    def handle(self, *args, file, **options):
        try:
            judgments = json.loads(Path(file).read_text(encoding="utf-8"))["judgments"]
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(f"cannot read judgments from {file}: {exc}")
        ensure_roles()
        created = teams.sync_from_jobs()
        members = self._members()
        applied = sum(self._apply(j) for j in judgments)
        self.stdout.write(f"demo_triage: {created} team(s) created, {members} member(s), manager {MANAGER}, "
                          f"{applied} of {len(judgments)} judgment(s) applied")

    def _user(self, name: str, group: str) -> User:
        user, made = User.objects.get_or_create(username=name, defaults={"email": f"{name}@example.org"})
        if made:
            user.set_unusable_password()
            user.save()
        user.groups.add(Group.objects.get(name=group))
        return user

    def _members(self) -> int:
        pairs = set(Job.objects.exclude(team="").exclude(submitter="").values_list("submitter", "team").distinct())
        for submitter, team in sorted(pairs):
            Team.objects.get(name=team).members.add(self._user(submitter, ENGINEERS))
        self._user(MANAGER, MANAGERS)
        return len({s for s, _ in pairs})

    def _apply(self, spec: dict) -> bool:
        platform, external_id = spec["job"].split(":", 1)
        job = Job.objects.filter(platform=platform, external_id=external_id, failure__isnull=False).first()
        if job is None:
            self.stderr.write(f"demo_triage: no failed job {spec['job']}, skipped")
            return False
        signature = job.failure.signature
        if SignatureTriage.objects.filter(pk=signature.pk).exclude(state=SignatureTriage.State.NEW).exists():
            return False  # already judged (a second run)
        user = self._user(spec["by"], ENGINEERS)
        services.judge(signature, user, **{f: spec[f] for f in services.JUDGED_FIELDS if f in spec})
        failures = list(signature.failures.select_related("job").order_by("job__ended_at"))
        last = failures[-1]
        if spec.get("fixed_by") == "auto" and last.job.ended_at:
            fixed = (Job.objects.filter(name=last.job.name, team=last.job.team, status__in=SUCCESS_STATUSES,
                                        ended_at__gt=last.job.ended_at).order_by("ended_at").first())
            if fixed:
                services.link_fixed_by(signature, user, fixed)
        triage = SignatureTriage.objects.get(pk=signature.pk)
        if triage.state == SignatureTriage.State.RESOLVED and last.job.ended_at:
            # Resolved when the fix ran, not when this command ran: the weeks' reports show it then.
            when = triage.fixed_by.ended_at if triage.fixed_by else last.job.ended_at + timedelta(days=1)
            SignatureTriage.objects.filter(pk=signature.pk).update(resolved_at=when, triaged_at=when)
        if spec.get("regression") and len(failures) > 1:
            # Resolved before its last failure: replay that failure through the check ingest runs.
            SignatureTriage.objects.filter(pk=signature.pk).update(
                state=SignatureTriage.State.RESOLVED, resolved_at=last.job.ended_at - timedelta(hours=12))
            services.mark_regression(last, signature, new_to_signature=True)
        return True
