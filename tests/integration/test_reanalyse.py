"""manage.py reanalyse on a real PostgreSQL database (#14.6): failures stored under an older grouping move to
their current signatures, judgments follow them with their history, and --dry-run changes nothing."""
import io

from django.contrib.auth.models import User
from django.core.management import call_command

from jobs_ingest import failures, services
from jobs_ingest.jobspec import parse_job
from jobs_ingest.models import Failure, Signature
from triage import services as triage_services
from triage.models import JudgmentEvent, SignatureTriage

LOG = b"Traceback (most recent call last):\n  File \"train.py\", line 9, in main\nKeyError: 'warmup_steps'\n"


def stored_under_an_old_grouping(n):
    """n failures of one signature, then that signature rewritten as an older normaliser would have made it."""
    for i in range(n):
        job = services.receive_job(parse_job({"platform": "slurm", "external_id": f"r{i}", "status": "failed"}),
                                   io.BytesIO(LOG)).job
        failures.analyse(job.pk)
    signature = Signature.objects.get()
    Signature.objects.filter(pk=signature.pk).update(fingerprint="0" * 16, normaliser_version="2025-01")
    return Signature.objects.get(pk=signature.pk)


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("reanalyse", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_judgments_follow_their_failures_to_the_new_signature(transactional_db, log_dir, es):
    old = stored_under_an_old_grouping(3)
    erin = User.objects.create_user("erin")
    triage_services.judge(old, erin, category="illegal_argument", root_cause="", notes="config key renamed",
                          fix_description="use warmup_ratio")

    dry, progress = run("--dry-run")
    assert "3 failures would move to another signature" in dry and "1 judgments would be carried" in dry
    assert "reanalyse (dry run)" in progress
    assert set(Failure.objects.values_list("signature_id", flat=True)) == {old.pk}  # nothing changed

    out, _ = run()
    assert "3 failures moved to another signature" in out and "1 judgments carried" in out
    new = Signature.objects.exclude(pk=old.pk).get()
    assert set(Failure.objects.values_list("signature_id", flat=True)) == {new.pk}
    assert new.failure_count == 3 and Signature.objects.get(pk=old.pk).failure_count == 0
    carried = SignatureTriage.objects.get(signature=new)
    assert (carried.category, carried.notes, carried.fix_description, carried.state) == \
        ("illegal_argument", "config key renamed", "use warmup_ratio", "resolved")
    history = set(JudgmentEvent.objects.filter(signature=new).values_list("field", "new_value"))
    assert ("carried from", f"signature {old.pk} (reanalyse)") in history and ("category", "illegal_argument") in history

    again, _ = run()  # nothing left to move
    assert "0 failures moved" in again and "0 judgments carried" in again


def test_a_new_signature_with_its_own_judgment_keeps_it(transactional_db, log_dir, es):
    old = stored_under_an_old_grouping(1)
    triage_services.judge(old, None, category="illegal_argument")
    job = services.receive_job(parse_job({"platform": "slurm", "external_id": "fresh", "status": "failed"}),
                               io.BytesIO(LOG)).job
    new = failures.analyse(job.pk).signature
    triage_services.judge(new, None, category="key_not_found")

    out, _ = run("--since", "2000-01-01")
    assert "1 left where the new signature had its own" in out
    assert SignatureTriage.objects.get(signature=new).category == "key_not_found"


def test_a_bad_date_is_a_clear_error(transactional_db):
    import pytest
    from django.core.management.base import CommandError
    with pytest.raises(CommandError, match="not a date"):
        run("--since", "last tuesday")
