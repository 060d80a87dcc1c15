"""Issue #17, the triage workflow: forms that keep what was typed, fixed-by warnings, issue links,
owners, sparklines, comments. Real PostgreSQL; jobs ingested through the real services."""
import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from jobs_ingest.models import Signature
from triage.models import JudgmentEvent, SignatureTriage
from triage.roles import ENGINEERS, MANAGERS

from .test_triage import make_job, user_in

BAD_DIFF = "--- a/train.py\n+++ b/train.py\n@@ -1,2 +1,2 @@\n-batch = 64\n"


@pytest.fixture
def engineer(db):
    return user_in(ENGINEERS, "erin")


@pytest.fixture
def manager(db):
    return user_in(MANAGERS, "mona")


@pytest.fixture
def oom(db, log_dir):
    make_job("1", ended_at="2026-11-16T09:00:00Z")
    make_job("2", submitter="bob", log="oom-node3.log", ended_at="2026-11-16T10:00:00Z")
    return Signature.objects.get(failures__job__external_id="1")


# ------------------------------------------------------------------ defect 1: a form with an error

def test_invalid_diff_shows_the_form_again_with_everything_typed(client, engineer, oom):
    client.force_login(engineer)
    response = client.post(reverse("judge", args=[oom.pk]), {
        "category": "cpu_oom", "root_cause": "", "notes": "batch too large for 80 GB",
        "fix_description": "halve the batch", "fix_diff": BAD_DIFF})
    assert response.status_code == 400  # no redirect: the typed text is in this very page
    form = response.context["form"]
    assert form.errors["fix_diff"][0].startswith("Not a valid unified diff")
    page = response.content.decode()
    assert "batch too large for 80 GB" in page and "halve the batch" in page and "-batch = 64" in page
    assert '<option value="cpu_oom" selected>' in page
    # The error sits beside its field, inside the same block as the diff textarea.
    block = page[page.index('id="id_fix_diff"') - 600:page.index('id="id_fix_diff"')]
    assert "errorlist" in block
    assert not SignatureTriage.objects.filter(signature=oom).exists()
    assert not JudgmentEvent.objects.exists()


def test_invalid_override_shows_the_form_again(client, engineer, oom):
    client.force_login(engineer)
    job_id = oom.failures.first().job_id
    response = client.post(reverse("override", args=[job_id]), {"category": "no-such", "notes": "only node 7"})
    assert response.status_code == 400
    assert "category" in response.context["override_form"].errors
    assert "only node 7" in response.content.decode()


def test_unknown_fixed_by_job_shows_the_error_beside_the_field(client, engineer, oom):
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": "slurm:does-not-exist"})
    assert response.status_code == 400
    assert "No such job" in response.context["fixed_by_form"].errors["job"][0]
    assert 'value="slurm:does-not-exist"' in response.content.decode()


# ------------------------------------------------------------------ defect 2: fixed by a failed job

def test_candidates_are_successful_jobs_ended_after_the_failure(oom, log_dir):
    from triage import services
    early = make_job("10", log="success.log", status="succeeded", ended_at="2026-11-16T08:30:00Z")
    later = make_job("11", log="success.log", status="succeeded", ended_at="2026-11-17T08:00:00Z")
    failed_later = make_job("12", log="killed.log", status="failed", ended_at="2026-11-17T09:00:00Z")
    other_name = make_job("13", log="success.log", status="succeeded", name="gpt", ended_at="2026-11-17T09:00:00Z")
    ids = [job.pk for job, _ in services.fixed_by_candidates(oom)]
    assert later.pk in ids
    assert early.pk not in ids and failed_later.pk not in ids and other_name.pk not in ids


def test_linking_a_failed_job_warns_and_needs_a_confirmation(client, engineer, oom, log_dir):
    failed = make_job("12", log="killed.log", status="failed", ended_at="2026-11-17T09:00:00Z")
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": f"slurm:{failed.external_id}"})
    assert response.status_code == 200
    warnings = response.context["fixed_by_pending_warnings"]
    assert any("did not succeed" in w for w in warnings)
    assert not SignatureTriage.objects.filter(signature=oom, fixed_by__isnull=False).exists()
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": str(failed.pk), "confirm": "1"}, follow=True)
    assert SignatureTriage.objects.get(signature=oom).fixed_by_id == failed.pk
    page = response.content.decode()
    assert "did not succeed" in page  # the page keeps warning about the link


def test_linking_a_job_that_ended_before_the_failure_warns(client, engineer, oom, log_dir):
    early = make_job("10", log="success.log", status="succeeded", ended_at="2026-11-16T08:30:00Z")
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": str(early.pk)})
    assert any("before the latest failure" in w for w in response.context["fixed_by_pending_warnings"])


def test_linking_a_good_job_needs_no_confirmation(client, engineer, oom, log_dir):
    later = make_job("11", log="success.log", status="succeeded", ended_at="2026-11-17T08:00:00Z")
    client.force_login(engineer)
    response = client.post(reverse("fixed-by", args=[oom.pk]), {"job": str(later.pk)})
    assert response.status_code == 302
    assert SignatureTriage.objects.get(signature=oom).fixed_by_id == later.pk
