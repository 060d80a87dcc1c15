"""The demo as scripts/dev.sh sets it up: 500 jobs ingested through the real pipeline (worker, PostgreSQL,
Elasticsearch), then `demo_triage`: teams from the jobs, members and a manager, judgments with fixes,
fixed-by links, a correction and a regression; the weekly report renders each team's email and the
managers' all-teams email; the reports index opens on a week with data."""
import io
from datetime import date
from pathlib import Path

from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from jobs_ingest.jobspec import SUCCESS_STATUSES
from triage.models import JudgmentEvent, SignatureTriage, Team
from triage.reports import latest_week_with_data
from triage.roles import MANAGERS

DEMO = Path(__file__).resolve().parents[2] / "demo"


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_demo_is_triaged_like_a_platform_in_use(celery_worker, client):
    run("ingest_dir", str(DEMO), "--wait", "--timeout", "240")
    assert "4 team(s) created, 9 member(s), manager maria, 8 of 8 judgment(s) applied" in run("demo_triage")
    assert "0 of 8 judgment(s) applied" in run("demo_triage")  # idempotent

    assert set(Team.objects.values_list("name", flat=True)) == {"nlp", "vision", "speech", "recsys"}
    assert set(Team.objects.get(name="nlp").members.values_list("username", flat=True)) == {"alice", "bob", "dmitri"}
    assert User.objects.get(username="maria").groups.filter(name=MANAGERS).exists()

    states = {t.signature_id: t for t in SignatureTriage.objects.all()}
    assert sorted(t.state for t in states.values()).count("resolved") == 4
    regressed = [t for t in states.values() if t.state == "regressed"]
    assert len(regressed) == 1
    assert JudgmentEvent.objects.filter(signature_id=regressed[0].pk, field="state", new_value="regressed",
                                        user__isnull=True).exists()  # by the regression check, not by hand
    for triage in states.values():
        if triage.fixed_by:
            last_failure = triage.signature.failures.order_by("-job__ended_at").first().job
            assert triage.fixed_by.status in SUCCESS_STATUSES and triage.fixed_by.ended_at > last_failure.ended_at
    assert sum(1 for t in states.values() if t.fixed_by) == 3
    assert JudgmentEvent.objects.filter(field="category", old_value="", new_value="framework_api_misuse").exists()

    emails = run("weekly_report", "--week", "2026-W47", "--dry-run")
    for line in ("--- 2026-W47 nlp → alice@example.org, bob@example.org, dmitri@example.org",
                 "--- 2026-W47 all teams → maria@example.org", "5 report(s) rendered"):
        assert line in emails

    assert str(latest_week_with_data(date(2026, 11, 24))) == "2026-W47"
    assert str(latest_week_with_data(date(2027, 1, 20))) == "2026-W47"  # quiet weeks since: the latest with data
    client.force_login(User.objects.get(username="maria"))
    assert client.get(reverse("report-index"))["Location"] == reverse("weekly-report", args=["2026-W47"])
