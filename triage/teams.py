"""Teams the product knows: every team named on an ingested job becomes a triage.Team, so that its
report can be emailed once an admin adds members."""
from jobs_ingest.models import Job
from triage.models import Team


def sync_from_jobs() -> int:
    """Create the missing Team rows for the team names on jobs. Returns how many were created."""
    named = set(Job.objects.exclude(team="").values_list("team", flat=True).distinct())
    missing = named - set(Team.objects.filter(name__in=named).values_list("name", flat=True))
    Team.objects.bulk_create([Team(name=name) for name in sorted(missing)], ignore_conflicts=True)
    return len(missing)
